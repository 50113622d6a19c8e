import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleFunction } from '../../infra/bundle'
import { S3rver, type S3rverServer } from '../support/s3rver'

/**
 * The upload path as a Worker runs it: the streaming multipart reader and the S3 adapter (the AWS SDK's client as
 * infra/bundle.ts bundles it: fetch, its XML parser without DOMParser, multipart parts) run in miniflare against
 * s3rver. The database side is the same drizzle code the Node suites run on Postgres through the Neon driver.
 */
const WORKER = `
import { boundaryOf, MultipartReader } from './functions/files/multipart'
import { S3Storage } from './functions/files/storage/s3'
export default {
  async fetch(request, env) {
    const s3 = new S3Storage({ bucket: 'workerd', region: 'us-east-1', endpoint: env.S3_ENDPOINT, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })
    const form = new MultipartReader(request.body, boundaryOf(request.headers.get('content-type')))
    let size = -1
    for (let part = await form.next(); part; part = await form.next()) {
      if (part.name === 'file') size = (await s3.putStream('workerd/' + part.filename, part.body, part.contentType)).size
    }
    const object = await s3.get('workerd/upload.bin')
    // S3's XML answers read in workerd: a missing key (an error body) is null; a deleted object is gone.
    await s3.put('workerd/doomed', new Uint8Array([1]), 'text/plain')
    await s3.delete('workerd/doomed')
    const gone = (await s3.get('workerd/doomed')) === null && (await s3.get('workerd/never')) === null
    return new Response(object.body, { headers: { 'x-stored-size': String(size), 'content-type': object.contentType, 'x-gone': String(gone) } })
  },
}
`

describe('the upload path in workerd', () => {
  let dir: string
  let server: S3rverServer
  let mf: Miniflare
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'workerd-s3-'))
    server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: 'workerd' }] })
    const { port } = await server.run()
    const { code } = await bundleFunction({ contents: WORKER })
    mf = new Miniflare({
      modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }],
      compatibilityDate: '2026-04-01',
      bindings: { S3_ENDPOINT: `http://127.0.0.1:${port}` },
    })
  })
  afterAll(async () => {
    await mf?.dispose()
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('streams a 12 MiB multipart upload into S3 parts and reads it back; deletes, and answers null for a missing key', async () => {
    const data = new Uint8Array(12 * 1024 * 1024 + 3).map((_, i) => (i * 7 + (i >> 12)) % 256)
    const boundary = 'workerd-boundary'
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload.bin"\r\nContent-Type: application/x-test\r\n\r\n`)
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`)
    const body = new Uint8Array(head.length + data.length + tail.length)
    body.set(head)
    body.set(data, head.length)
    body.set(tail, head.length + data.length)
    const res = await mf.dispatchFetch('http://localhost/', { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(res.headers.get('x-stored-size')).toBe(String(data.length))
    expect(res.headers.get('content-type')).toBe('application/x-test')
    expect(res.headers.get('x-gone')).toBe('true')
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(data))).toBe(true)
  }, 120_000)
})
