import { and, eq } from 'drizzle-orm'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { createServer, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LocalQueue } from '../../../infra/local-queue'
import { FILES_PURGE_PATH } from '../../../lib/files/purge'
import { signDelivery } from '../../../lib/queue/sign'
import { files, storageUsage } from '../../../schema'
import { BROWSER, createHarness, type Harness, PAYING, type SeededUser } from '../../support/harness'
import { type FaultProxy, startFaultProxy } from '../../support/fault-proxy'
import { listen, type Loopback } from '../../support/loopback'
import { S3rver, type S3rverServer } from '../../support/s3rver'

/** Every files suite runs on both stores: the local file store and S3 (s3rver), with the same tests. */
export const STORES = ['local', 's3'] as const
export type StoreKind = (typeof STORES)[number]

const BUCKET = 'files-test'
/** The in-process queue signs with this key, so a test can sign a delivery itself (`deliverPurge`). */
const QUEUE_KEY = 'files-family-queue-key'
export const PURGE_URL = `http://127.0.0.1:8787${FILES_PURGE_PATH}`

export interface FilesHarness extends Harness {
  kind: StoreKind
  /** Where the store keeps its bytes on disk (local root, or s3rver's directory): to check nothing is left. */
  storeDir: string
  /**
   * S3 with `faultyDeletes` only: while true, the store answers every DeleteObject with 503 SlowDown, as S3 does
   * under load (a proxy in front of s3rver; everything else passes through). `refused` counts those answers.
   */
  faults: { failDeletes: boolean; refused: number }
  /** S3 with `faultProxy` only: the fault proxy (tests/support/fault-proxy.ts) in front of s3rver. */
  proxy?: FaultProxy
}

/**
 * A harness whose storage is `kind`, in a fresh directory (and, for S3, its own s3rver; with `faultyDeletes`, behind
 * a proxy whose deletes can be made to fail: `h.faults.failDeletes`; with `faultProxy`, behind the fault proxy:
 * `h.proxy.set('blackhole')`).
 */
export async function filesHarness(
  kind: StoreKind,
  env: Record<string, string> = {},
  opts: { faultyDeletes?: boolean; faultProxy?: boolean } = {},
): Promise<FilesHarness & { closeAll(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `files-${kind}-`))
  let server: S3rverServer | undefined
  let proxy: Loopback | undefined
  let faultProxy: FaultProxy | undefined
  const faults = { failDeletes: false, refused: 0 }
  let storeEnv: Record<string, string> = { DATA_DIR: dir }
  let storeDir = join(dir, 'files')
  if (kind === 's3') {
    storeDir = join(dir, 's3rver')
    server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: storeDir, configureBuckets: [{ name: BUCKET }] })
    let { port } = await server.run()
    if (opts.faultyDeletes) {
      const s3Port = port
      const faulty = createServer((req, res) => {
        // DeleteObject carries no uploadId (AbortMultipartUpload, also a DELETE, does).
        if (faults.failDeletes && req.method === 'DELETE' && !new URL(req.url ?? '/', 'http://x').searchParams.has('uploadId')) {
          faults.refused++
          req.resume()
          res.writeHead(503, { 'content-type': 'application/xml' })
          res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>')
          return
        }
        const out = request({ host: '127.0.0.1', port: s3Port, method: req.method, path: req.url, headers: req.headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        })
        req.pipe(out)
      })
      proxy = await listen(faulty)
      port = proxy.port
    }
    if (opts.faultProxy) {
      faultProxy = await startFaultProxy({ target: `http://127.0.0.1:${port}`, mode: 'http' })
      port = faultProxy.port
    }
    storeEnv = {
      ...storeEnv,
      S3_BUCKET: BUCKET,
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: '1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    }
  }
  const h = await createHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY, ...storeEnv, ...env }, plan: PAYING })
  return Object.assign(h, {
    kind,
    storeDir,
    faults,
    proxy: faultProxy,
    async closeAll() {
      await h.close()
      await faultProxy?.close()
      await proxy?.close()
      await server?.close()
      await rm(dir, { recursive: true, force: true })
    },
  })
}

/** Object files the store holds for `userId` (local: the files; s3rver: its object files), temp files included. */
export async function objectsOf(h: FilesHarness, userId: string): Promise<string[]> {
  const dir = h.kind === 'local' ? join(h.storeDir, 'files', userId) : join(h.storeDir, BUCKET, 'files', userId)
  if (!existsSync(dir)) return []
  const names = await readdir(dir, { recursive: true })
  return names.map(String).filter((n) => h.kind === 'local' || n.endsWith('._S3rver_object'))
}

export type FormPart = { name: string; value: string } | { name: string; filename?: string; type?: string; data: Uint8Array | string }

export const BOUNDARY = '----FilesTestBoundary7MA4YWxkTrZu0gW'
const enc = new TextEncoder()

/** A body as a browser builds it: each part, the closing boundary and a final CRLF. */
export function multipart(parts: FormPart[], boundary = BOUNDARY): Uint8Array {
  const chunks: Uint8Array[] = []
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`
    if ('data' in p) {
      if (p.filename !== undefined) head += `; filename="${p.filename}"`
      head += '\r\n'
      if (p.type) head += `Content-Type: ${p.type}\r\n`
      chunks.push(enc.encode(`${head}\r\n`), typeof p.data === 'string' ? enc.encode(p.data) : p.data, enc.encode('\r\n'))
    } else {
      chunks.push(enc.encode(`${head}\r\n\r\n${p.value}\r\n`))
    }
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`))
  return concat(chunks)
}

export function concat(chunks: Uint8Array[]) {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  return out
}

/** Bytes 0..255 repeated: binary content with every byte value (CR, LF and `-` included). */
export const binary = (size: number) => new Uint8Array(size).map((_, i) => i % 256)

/**
 * What an upload of `multipart([agentId, file])` reserves beyond the file's bytes: the CRLF a browser puts after the
 * closing boundary (the reservation is the rest of `Content-Length` less the closing boundary), given back at the end.
 */
export const RESERVE_SLACK = 2

export interface SendOptions {
  user?: SeededUser
  headers?: Record<string, string>
  /** Send as a stream without `Content-Length` (chunked, as a client that does not know the length). */
  stream?: boolean
  path?: string
}

/** `POST /api/files` with a multipart body (or any body: the error tests), `Content-Length` set as a browser would. */
export function send(h: Harness, body: Uint8Array | ReadableStream<Uint8Array>, opts: SendOptions & { contentType?: string } = {}) {
  const headers: Record<string, string> = { ...BROWSER, 'content-type': opts.contentType ?? `multipart/form-data; boundary=${BOUNDARY}` }
  if (opts.user) headers.cookie = opts.user.cookie
  let payload: BodyInit
  if (body instanceof Uint8Array && !opts.stream) {
    headers['content-length'] = String(body.length)
    payload = body as Uint8Array<ArrayBuffer>
  } else {
    payload = body instanceof Uint8Array ? streamOf(body) : body
  }
  return h.web.request(opts.path ?? '/api/files', { method: 'POST', headers: { ...headers, ...opts.headers }, body: payload, duplex: 'half' } as RequestInit)
}

/** Uploads one file for `agentId` as `user`. */
export function upload(h: Harness, user: SeededUser, agentId: string, file: { filename?: string; type?: string; data: Uint8Array | string }, opts: SendOptions = {}) {
  return send(h, multipart([{ name: 'agentId', value: agentId }, { name: 'file', ...file }]), { ...opts, user })
}

/** `bytes` in chunks of `chunk`, pulled one at a time. */
export function streamOf(bytes: Uint8Array, chunk = 16 * 1024): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= bytes.length) return c.close()
      c.enqueue(bytes.slice(at, at + chunk))
      at += chunk
    },
  })
}

export const list = (h: Harness, user: SeededUser, query = '') => h.web.request(`/api/files${query}`, { headers: { ...BROWSER, cookie: user.cookie } })
export const download = (h: Harness, user: SeededUser, id: string) => h.web.request(`/api/files?download=${encodeURIComponent(id)}`, { headers: { ...BROWSER, cookie: user.cookie } })
export const remove = (h: Harness, user: SeededUser, body: unknown) =>
  h.web.request('/api/files', {
    method: 'DELETE',
    headers: { ...BROWSER, cookie: user.cookie, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

/** The user's storage_usage bytes (0 without a row). */
export async function usageOf(h: Harness, userId: string) {
  const [row] = await h.db.select({ bytes: storageUsage.bytes }).from(storageUsage).where(eq(storageUsage.userId, userId))
  return row?.bytes ?? 0
}

/** Sets the user's usage row to `bytes` (a user near the edge of their quota). */
export async function setUsage(h: Harness, userId: string, bytes: number) {
  await h.db.insert(storageUsage).values({ userId, bytes }).onConflictDoUpdate({ target: storageUsage.userId, set: { bytes } })
}

export async function recordsOf(h: Harness, userId: string, status?: 'pending' | 'stored' | 'deleting') {
  return h.db
    .select()
    .from(files)
    .where(and(eq(files.userId, userId), status ? eq(files.status, status) : undefined))
}

/** Resolves once the in-process queue has nothing waiting, in flight or awaiting a retry (the purge an agent's delete queued). */
export const queueIdle = (h: Harness) => (h.services.queue as LocalQueue).idle()

/** The files purge for `userId`, delivered as the queue delivers it (signed with `key`). */
export async function deliverPurge(h: Harness, userId: string, key = QUEUE_KEY) {
  const text = JSON.stringify({ userId })
  return h.web.request(PURGE_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(key, PURGE_URL, text) },
    body: text,
  })
}
