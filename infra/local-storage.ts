import { randomUUID } from 'node:crypto'
import { type FileHandle, mkdir, open, rename, rm } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { Readable } from 'node:stream'
import { assertValidKey } from '../functions/files/storage/keys'
import type { Storage, StoredObject } from '../lib/context'

/**
 * Objects as files under `root`; a key `a/b` lives at `root/a/b`.
 *
 * Each file is `[u32 BE header length][JSON header {contentType}][body]`. Keeping the
 * content type inside the object file (rather than a sidecar) means one rename publishes
 * body and type together, so concurrent puts or a crash can never pair one write's bytes
 * with another's type, and no file names are reserved for metadata.
 *
 * Limitation: as on any filesystem, `a` and `a/b` cannot both exist (file vs directory).
 */
export class LocalStorage implements Storage {
  private root: string

  constructor(root: string) {
    this.root = resolve(root)
  }

  async put(key: string, body: Uint8Array | ArrayBuffer, contentType: string) {
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(body)
    await this.write(key, contentType, (fh) => fh.writeFile(bytes))
  }

  /** The stream goes chunk by chunk into the temporary file; the rename publishes it only once it is all there. */
  async putStream(key: string, body: ReadableStream<Uint8Array>, contentType: string) {
    const reader = body.getReader()
    let size = 0
    try {
      await this.write(key, contentType, async (fh) => {
        for (let r = await reader.read(); !r.done; r = await reader.read()) {
          await fh.writeFile(r.value) // at the current position, looping until all of it is written
          size += r.value.byteLength
        }
      })
    } catch (e) {
      await reader.cancel(e).catch(() => {}) // a store failure: stop reading the source
      throw e
    }
    return { size }
  }

  /** Header, then `writeBody`, into a temporary file beside the target, synced, then renamed over it. */
  private async write(key: string, contentType: string, writeBody: (fh: FileHandle) => Promise<void>) {
    const path = this.pathFor(key)
    const json = Buffer.from(JSON.stringify({ contentType }))
    const len = Buffer.alloc(4)
    len.writeUInt32BE(json.length)

    await mkdir(dirname(path), { recursive: true })
    // Same directory as the target so the rename stays on one filesystem (atomic).
    const tmp = `${path}.${randomUUID()}.tmp`
    try {
      const fh = await open(tmp, 'wx')
      try {
        await fh.writeFile(Buffer.concat([len, json]))
        await writeBody(fh)
        await fh.sync() // otherwise a crash after rename can leave an empty file
      } finally {
        await fh.close()
      }
      await rename(tmp, path)
    } catch (e) {
      await rm(tmp, { force: true })
      throw e
    }
  }

  async get(key: string): Promise<StoredObject | null> {
    const path = this.pathFor(key)
    let fh
    try {
      fh = await open(path, 'r')
    } catch (e) {
      if (isCode(e, 'ENOENT', 'ENOTDIR')) return null
      throw e
    }
    try {
      // Header and body are read through this one descriptor, so a concurrent put
      // (rename over the path) cannot mix two versions.
      const stat = await fh.stat()
      if (!stat.isFile()) {
        await fh.close()
        return null // a directory is only a key prefix, not an object
      }
      const lenBuf = Buffer.alloc(4)
      await readExactly(fh, lenBuf, 0)
      const headerLen = lenBuf.readUInt32BE(0)
      const start = 4 + headerLen
      if (start > stat.size) throw new Error(`LocalStorage: corrupt object file for key ${JSON.stringify(key)}`)
      const header = Buffer.alloc(headerLen)
      await readExactly(fh, header, 4)
      const { contentType } = JSON.parse(header.toString('utf8')) as { contentType?: string }

      const stream = fh.createReadStream({ start, autoClose: true })
      return {
        body: Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>,
        size: stat.size - start,
        contentType: contentType || 'application/octet-stream',
      }
    } catch (e) {
      await fh.close().catch(() => {})
      throw e
    }
  }

  async delete(key: string) {
    try {
      await rm(this.pathFor(key))
    } catch (e) {
      // Missing (or only a prefix directory): S3 semantics, nothing to do.
      if (isCode(e, 'ENOENT', 'ENOTDIR', 'ERR_FS_EISDIR', 'EISDIR')) return
      throw e
    }
  }

  /** Maps a key to a path inside root, refusing anything that could point elsewhere. */
  private pathFor(key: string): string {
    assertValidKey(key) // empty segments cover absolute keys ("/x"), "a//b" and trailing slashes
    const path = resolve(this.root, key)
    const rel = relative(this.root, path)
    // Belt and braces: the segment rules should already guarantee this.
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new Error(`LocalStorage: key escapes root ${JSON.stringify(key)}`)
    }
    return path
  }
}

async function readExactly(fh: FileHandle, buf: Buffer, position: number) {
  const { bytesRead } = await fh.read(buf, 0, buf.length, position)
  if (bytesRead !== buf.length) throw new Error('LocalStorage: truncated object file')
}

function isCode(e: unknown, ...codes: string[]) {
  return codes.includes((e as { code?: string })?.code ?? '')
}
