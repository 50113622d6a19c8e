import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

const require = createRequire(import.meta.url)

// s3rver ships no type declarations; type only what we use.
export interface S3rverServer {
  run(): Promise<{ address: string; port: number }>
  close(): Promise<void>
}
type S3rverCtor = new (opts: Record<string, unknown>) => S3rverServer

interface StoredObject {
  bucket: string
  key: string
  content: Buffer | Readable
  metadata: Record<string, string>
}
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>
}

/**
 * s3rver 3.7 answers a PUT before its file is flushed (it resolves on `end()` / the transform's `finish`,
 * not the write stream's), so a GET right after can read a short file under load. S3 is read-after-write
 * consistent; this makes the peer so by awaiting the write itself.
 */
const store = require('s3rver/lib/stores/filesystem') as { prototype: FilesystemStore & { putObject: unknown } }
store.prototype.putObject = async function putObject(this: FilesystemStore, object: StoredObject) {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object')
  await mkdir(dirname(objectPath), { recursive: true })
  const md5 = createHash('md5')
  let size = 0
  const source = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content
  await pipeline(
    source,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        md5.update(chunk)
        size += chunk.length
        yield chunk
      }
    },
    createWriteStream(objectPath),
  )
  const digest = md5.digest('hex')
  await this.putMetadata(object.bucket, object.key, object.metadata, digest)
  return { size, md5: digest }
}

export const S3rver = require('s3rver') as S3rverCtor
