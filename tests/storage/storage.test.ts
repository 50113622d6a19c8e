import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalStorage } from '../../infra/local-storage'
import { S3Storage } from '../../lib/storage/s3'
import { readAll, storageContract } from './storage-contract'

import { S3rver, type S3rverServer } from '../support/s3rver'

const tempDirs: string[] = []
const tempDir = async (prefix: string) => {
  const d = await mkdtemp(join(tmpdir(), prefix))
  tempDirs.push(d)
  return d
}
afterAll(async () => {
  await Promise.all(tempDirs.map((d) => rm(d, { recursive: true, force: true })))
})

describe('LocalStorage', () => {
  let parent: string
  let root: string
  let storage: LocalStorage
  beforeAll(async () => {
    // root is a child of a temp dir so escapes into the parent are observable.
    parent = await tempDir('local-storage-')
    root = join(parent, 'files')
    storage = new LocalStorage(root)
  })

  storageContract('LocalStorage', () => storage)

  it('stores keys as nested paths and leaves no temp files', async () => {
    await storage.put('nested-user/nested-file', new Uint8Array([1, 2]), 'text/plain')
    expect(await readdir(join(root, 'nested-user'))).toEqual(['nested-file'])
  })

  it('rejects keys that could escape the root, writing nothing outside it', async () => {
    const bad = [
      '',
      '.',
      '..',
      '../escape',
      'a/../../escape',
      'a/..',
      '/etc/escape',
      '//escape',
      'a//b',
      'a/./b',
      'trailing/',
      'a\\..\\..\\escape',
      '..\\escape',
      'nul\0byte',
    ]
    for (const k of bad) {
      await expect(storage.put(k, new Uint8Array([1]), 'text/plain'), k).rejects.toThrow(/invalid key/)
      await expect(storage.get(k), k).rejects.toThrow(/invalid key/)
      await expect(storage.delete(k), k).rejects.toThrow(/invalid key/)
    }
    expect(await readdir(parent)).toEqual(['files'])
    expect(existsSync('/etc/escape')).toBe(false)
  })

  it('allows names that merely start with dots', async () => {
    await storage.put('dots/..hidden', new Uint8Array([5]), 'text/plain')
    expect(await readAll((await storage.get('dots/..hidden'))!.body)).toEqual(new Uint8Array([5]))
  })
})

describe('S3Storage (s3rver)', () => {
  let server: S3rverServer
  let storage: S3Storage
  beforeAll(async () => {
    server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: await tempDir('s3rver-'),
      configureBuckets: [{ name: 'test-bucket' }],
    })
    const { port } = await server.run()
    storage = new S3Storage({
      bucket: 'test-bucket',
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      partSize: 5 * 1024 * 1024, // S3's minimum, so the contract's 10 and 11 MiB bodies take two and three parts
    })
  })
  afterAll(() => server?.close())

  storageContract('S3Storage', () => storage)
})
