import { existsSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalStorage } from '../../infra/local-storage'
import { S3Storage } from '../../functions/files/storage/s3'
import { patternStream, readAll, storageContract } from './storage-contract'

import { listen, type Loopback } from '../support/loopback'
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
  let s3Port: number
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
    s3Port = port
    storage = new S3Storage({
      bucket: 'test-bucket',
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
    })
  })
  afterAll(() => server?.close())

  // Parts are 5 MiB by default: the contract's 10 and 11 MiB bodies take two and three.
  storageContract('S3Storage', () => storage)

  describe('multipart parts, seen on the wire', () => {
    let proxy: Loopback
    let seen: Array<{ method: string; query: string; length: number; authorization?: string }>
    let viaProxy: S3Storage
    beforeAll(async () => {
      // A recording proxy in front of s3rver: what the adapter sends, request by request.
      seen = []
      const server = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x')
        seen.push({ method: req.method ?? '', query: url.search, length: Number(req.headers['content-length'] ?? 0), authorization: req.headers.authorization ?? '' })
        const out = request({ host: '127.0.0.1', port: s3Port, method: req.method, path: req.url, headers: req.headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        })
        req.pipe(out)
      })
      proxy = await listen(server)
      viaProxy = new S3Storage({
        bucket: 'test-bucket',
        region: 'us-east-1',
        endpoint: proxy.url,
        forcePathStyle: true,
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
      })
    })
    afterAll(() => proxy.close())

    it('requests are signed (SigV4) with keys, and go unsigned without them', async () => {
      const proxied = { bucket: 'test-bucket', region: 'us-east-1', endpoint: proxy.url, forcePathStyle: true }
      seen = []
      await viaProxy.put('wire/signed', new Uint8Array([1]), 'text/plain')
      const open = new S3Storage(proxied)
      await open.put('wire/unsigned', new Uint8Array([2]), 'text/plain')
      expect(await readAll((await open.get('wire/unsigned'))!.body)).toEqual(new Uint8Array([2]))
      expect(seen.map((s) => s.authorization)).toEqual([expect.stringMatching(/^AWS4-HMAC-SHA256 Credential=S3RVER\/\d{8}\/us-east-1\/s3\/aws4_request, /), '', ''])
    })

    const parts = () => seen.filter((s) => s.method === 'PUT' && s.query.includes('partNumber')).map((s) => s.length)

    it('a body past one part is sent in 5 MiB parts, all one size but the last (R2 requires it)', async () => {
      seen = []
      const total = 12 * MiB + 5
      expect(await viaProxy.putStream('wire/a', patternStream(total, 100_000), 'application/octet-stream')).toEqual({ size: total })
      expect(parts()).toEqual([5 * MiB, 5 * MiB, 2 * MiB + 5])
      expect(seen.map((s) => s.method)).toEqual(['POST', 'PUT', 'PUT', 'PUT', 'POST'])
    }, 60_000)

    it('maxBytes past 50 GiB makes the parts larger, so 10,000 of them carry it', async () => {
      seen = []
      await viaProxy.putStream('wire/b', patternStream(12 * MiB, 100_000), 'application/octet-stream', { maxBytes: 100 * 1024 * MiB })
      expect(parts()).toEqual([11 * MiB, 1 * MiB])
    }, 60_000)

    it('a body within one part is a single PutObject', async () => {
      seen = []
      await viaProxy.putStream('wire/c', patternStream(5 * MiB, 100_000), 'application/octet-stream')
      // PutObject: no `uploads`, `uploadId` or `partNumber` (the SDK names the operation in `x-id`).
      expect(seen.map(({ method, query, length }) => ({ method, query, length }))).toEqual([{ method: 'PUT', query: '?x-id=PutObject', length: 5 * MiB }])
    }, 60_000)
  })
})

describe('S3Storage against a store that never answers', () => {
  let silent: Loopback
  let storage: S3Storage
  beforeAll(async () => {
    silent = await listen(createServer(() => {})) // reads the request, never answers
    storage = new S3Storage({ bucket: 'b', region: 'us-east-1', endpoint: silent.url, forcePathStyle: true, accessKeyId: 'k', secretAccessKey: 's', callTimeoutMs: 300 })
  })
  afterAll(() => silent.close())

  it('gives up on every call once its deadline passes', async () => {
    const started = Date.now()
    const timeout = { name: 'TimeoutError', message: 'No answer within 300 ms' }
    await expect(storage.get('k/get')).rejects.toMatchObject(timeout)
    await expect(storage.put('k/put', new Uint8Array([1]), 'text/plain')).rejects.toMatchObject(timeout)
    await expect(storage.delete('k/delete')).rejects.toMatchObject(timeout)
    // A body past its first part: its CreateMultipartUpload gets no answer.
    await expect(storage.putStream('k/stream', patternStream(6 * MiB), 'application/octet-stream')).rejects.toMatchObject(timeout)
    expect(Date.now() - started).toBeLessThan(10_000)
  }, 20_000)
})

const MiB = 1024 * 1024
