import { errorFields, log } from '../log'
import { assertValidKey } from './keys'
import { EMPTY_SHA256, sha256Hex, signS3Request, uriEncode } from './sigv4'
import type { Storage, StoredObject } from './types'

export interface S3Options {
  bucket: string
  region: string
  endpoint?: string
  accessKeyId?: string
  secretAccessKey?: string
  forcePathStyle?: boolean
  /** Bytes of the first multipart parts (S3's minimum is 5 MiB); tests lower it to exercise several parts. */
  partSize?: number
}

/** A part: 8 MiB for the first thousand, then 16 MiB, ...: 10,000 parts reach 440 GB, past every plan's quota. */
const PART_SIZE = 8 * 1024 * 1024
const MAX_PARTS = 10_000
/** Waiting for a store's answer (headers); a download's body then streams as long as the client reads. */
const HEADERS_TIMEOUT_MS = 120_000

export class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly s3Code: string | undefined,
    operation: string,
  ) {
    super(`S3 ${operation} failed: ${status}${s3Code ? ` ${s3Code}` : ''}`)
    this.name = 'S3Error'
  }
}

/**
 * Any S3-compatible store over `fetch`, signed with SigV4 (lib/storage/sigv4.ts): the same code on Node and on
 * Workers, where the AWS SDK would not fit a function's size budget. Without credentials, requests go unsigned
 * (a bucket open to this network, e.g. a local MinIO).
 *
 * `putStream` holds one part in memory: a body that ends within the first part is one PutObject, a longer one a
 * multipart upload (aborted on failure, so no partial object ever becomes visible; a crash mid-upload leaves an
 * incomplete multipart upload, which the bucket's `AbortIncompleteMultipartUpload` lifecycle rule clears).
 */
export class S3Storage implements Storage {
  private readonly base: URL
  private readonly partSize: number

  constructor(private readonly opts: S3Options) {
    this.base = new URL(opts.endpoint ?? `https://s3.${opts.region}.amazonaws.com`)
    this.partSize = opts.partSize ?? PART_SIZE
  }

  async put(key: string, body: Uint8Array | ArrayBuffer, contentType: string) {
    assertValidKey(key)
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(body)
    await this.send('PutObject', 'PUT', key, { body: bytes, headers: { 'content-type': contentType } })
  }

  async putStream(key: string, body: ReadableStream<Uint8Array>, contentType: string) {
    assertValidKey(key)
    const parts = new PartReader(body)
    try {
      let part = await parts.next(this.partBytes(0))
      if (part.last) {
        await this.put(key, part.bytes, contentType)
        return { size: part.bytes.byteLength }
      }
      const uploadId = await this.createMultipart(key, contentType)
      try {
        const etags: string[] = []
        let size = 0
        for (;;) {
          if (etags.length >= MAX_PARTS) throw new Error('S3: object too large for a multipart upload')
          etags.push(await this.uploadPart(key, uploadId, etags.length + 1, part.bytes))
          size += part.bytes.byteLength
          if (part.last) break
          part = await parts.next(this.partBytes(etags.length)) // not last before: at least one byte follows
        }
        await this.completeMultipart(key, uploadId, etags)
        return { size }
      } catch (e) {
        await this.send('AbortMultipartUpload', 'DELETE', key, { query: { uploadId } }).catch((err) =>
          log.warn('storage.s3_abort_failed', errorFields(err)),
        )
        throw e
      }
    } catch (e) {
      await parts.cancel(e)
      throw e
    }
  }

  async get(key: string): Promise<StoredObject | null> {
    assertValidKey(key)
    const res = await this.send('GetObject', 'GET', key, { allow404: true })
    if (res.status === 404) {
      await res.body?.cancel()
      return null
    }
    return {
      body: res.body ?? new Response(new Uint8Array(0)).body!,
      size: Number(res.headers.get('content-length') ?? 0),
      contentType: res.headers.get('content-type') || 'application/octet-stream',
    }
  }

  async delete(key: string) {
    assertValidKey(key)
    const res = await this.send('DeleteObject', 'DELETE', key, { allow404: true })
    await res.body?.cancel()
  }

  private partBytes(index: number) {
    return this.partSize * (1 + Math.floor(index / 1000))
  }

  private async createMultipart(key: string, contentType: string) {
    const res = await this.send('CreateMultipartUpload', 'POST', key, { query: { uploads: '' }, headers: { 'content-type': contentType } })
    const uploadId = xmlValue(await res.text(), 'UploadId')
    if (!uploadId) throw new S3Error(res.status, 'NoUploadId', 'CreateMultipartUpload')
    return uploadId
  }

  private async uploadPart(key: string, uploadId: string, partNumber: number, bytes: Uint8Array) {
    const res = await this.send('UploadPart', 'PUT', key, { query: { partNumber: String(partNumber), uploadId }, body: bytes })
    await res.body?.cancel()
    const etag = res.headers.get('etag')
    if (!etag) throw new S3Error(res.status, 'NoETag', 'UploadPart')
    return etag
  }

  private async completeMultipart(key: string, uploadId: string, etags: string[]) {
    const xml =
      '<CompleteMultipartUpload>' +
      etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`).join('') +
      '</CompleteMultipartUpload>'
    const res = await this.send('CompleteMultipartUpload', 'POST', key, { query: { uploadId }, body: new TextEncoder().encode(xml), headers: { 'content-type': 'application/xml' } })
    // S3 can answer 200 and still report a failure in the body.
    const text = await res.text()
    if (/<Error>/.test(text)) throw new S3Error(res.status, xmlValue(text, 'Code'), 'CompleteMultipartUpload')
  }

  private url(key: string, query: Record<string, string> = {}) {
    const path = uriEncode(key, true)
    const base = this.base
    const prefix = base.pathname.replace(/\/+$/, '')
    const url = this.opts.forcePathStyle
      ? new URL(`${base.protocol}//${base.host}${prefix}/${uriEncode(this.opts.bucket)}/${path}`)
      : new URL(`${base.protocol}//${this.opts.bucket}.${base.host}${prefix}/${path}`)
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v)
    return url
  }

  private async send(
    operation: string,
    method: string,
    key: string,
    opts: { query?: Record<string, string>; headers?: Record<string, string>; body?: Uint8Array; allow404?: boolean } = {},
  ): Promise<Response> {
    const url = this.url(key, opts.query)
    let headers: Record<string, string> = { ...opts.headers }
    if (this.opts.accessKeyId && this.opts.secretAccessKey) {
      const payloadHash = opts.body ? await sha256Hex(opts.body) : EMPTY_SHA256
      headers = await signS3Request(
        { accessKeyId: this.opts.accessKeyId, secretAccessKey: this.opts.secretAccessKey, region: this.opts.region },
        { method, url, headers, payloadHash },
      )
    }
    const abort = new AbortController()
    const timer = setTimeout(() => abort.abort(new Error(`S3 ${operation} timed out`)), HEADERS_TIMEOUT_MS)
    let res: Response
    try {
      res = await fetch(url, { method, headers, body: opts.body as BodyInit | undefined, signal: abort.signal })
    } finally {
      clearTimeout(timer)
    }
    if (res.ok || (opts.allow404 && res.status === 404)) return res
    const text = await res.text().catch(() => '')
    throw new S3Error(res.status, xmlValue(text, 'Code'), operation)
  }
}

/** Reads a stream in parts of a given size: one part's bytes in memory at a time. */
class PartReader {
  private reader: ReadableStreamDefaultReader<Uint8Array>
  private carry: Uint8Array | null = null
  private ended = false

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader()
  }

  /** Up to `size` bytes; `last` when the stream has nothing after them. */
  async next(size: number): Promise<{ bytes: Uint8Array; last: boolean }> {
    const chunks: Uint8Array[] = []
    let total = 0
    for (;;) {
      if (total >= size) break
      const chunk = this.carry ?? (await this.read())
      this.carry = null
      if (!chunk) break
      const room = size - total
      if (chunk.byteLength > room) {
        chunks.push(chunk.subarray(0, room))
        this.carry = chunk.subarray(room)
        total += room
      } else {
        chunks.push(chunk)
        total += chunk.byteLength
      }
    }
    // A full part: look one chunk ahead, so a body ending exactly here is one PutObject rather than a multipart.
    if (!this.carry && !this.ended) this.carry = await this.read()
    return { bytes: concat(chunks, total), last: !this.carry }
  }

  async cancel(reason: unknown) {
    if (!this.ended) await this.reader.cancel(reason).catch(() => {})
  }

  private async read(): Promise<Uint8Array | null> {
    if (this.ended) return null
    for (;;) {
      const { done, value } = await this.reader.read()
      if (done) {
        this.ended = true
        return null
      }
      if (value.byteLength) return value
    }
  }
}

function concat(chunks: Uint8Array[], total: number) {
  if (chunks.length === 1) return chunks[0]
  const out = new Uint8Array(total)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

const xmlValue = (xml: string, tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1]
const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
