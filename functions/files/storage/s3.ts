import { errorFields, log } from '../../../lib/log'
import { assertValidKey } from './keys'
import { EMPTY_SHA256, payloadHash, signS3Request, uriEncode } from './sigv4'
import type { Storage, StoredObject } from '../../../lib/context'

export interface S3Options {
  bucket: string
  region: string
  endpoint?: string
  accessKeyId?: string
  secretAccessKey?: string
  forcePathStyle?: boolean
  /** The smallest multipart part (S3's minimum, 5 MiB, by default). */
  minPartSize?: number
}

const MiB = 1024 * 1024
const MIN_PART_SIZE = 5 * MiB
const MAX_PARTS = 10_000
/** A body up to this size is gathered as it comes; past it, into one part-sized buffer reused for every part. */
const SMALL_BODY = 256 * 1024
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
 * Any S3-compatible store over `fetch`, signed with SigV4 (sigv4.ts): the same code on Node and on
 * Workers, where the AWS SDK would not fit a function's size budget. Without credentials, requests go unsigned
 * (a bucket open to this network, e.g. a local MinIO).
 *
 * `putStream` holds one part in memory: a body that ends within the first part is one PutObject, a longer one a
 * multipart upload (aborted on failure, so no partial object ever becomes visible; a crash mid-upload leaves an
 * incomplete multipart upload, which the bucket's `AbortIncompleteMultipartUpload` lifecycle rule clears).
 * Parts are sent one at a time: throughput is one part's round trip at a time, memory one part.
 */
export class S3Storage implements Storage {
  private readonly base: URL
  private readonly minPartSize: number

  constructor(private readonly opts: S3Options) {
    this.base = new URL(opts.endpoint ?? `https://s3.${opts.region}.amazonaws.com`)
    this.minPartSize = opts.minPartSize ?? MIN_PART_SIZE
  }

  async put(key: string, body: Uint8Array | ArrayBuffer, contentType: string) {
    assertValidKey(key)
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(body)
    await this.send('PutObject', 'PUT', key, { body: bytes, headers: { 'content-type': contentType } })
  }

  /**
   * Parts are all one size (R2 requires it), the smallest that lets 10,000 parts carry `maxBytes` (5 MiB up to
   * 50 GiB): memory is one part buffer, reused, plus the copy `fetch` makes of the part it sends.
   */
  async putStream(key: string, body: ReadableStream<Uint8Array>, contentType: string, opts: { maxBytes?: number } = {}) {
    assertValidKey(key)
    const partSize = Math.max(this.minPartSize, Math.ceil((opts.maxBytes ?? 0) / MAX_PARTS / MiB) * MiB)
    const parts = new PartReader(body, partSize)
    try {
      let part = await parts.next()
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
          part = await parts.next() // not last before: at least one byte follows; the part's buffer is free again
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
      headers = await signS3Request(
        { accessKeyId: this.opts.accessKeyId, secretAccessKey: this.opts.secretAccessKey, region: this.opts.region },
        { method, url, headers, payloadHash: opts.body ? await payloadHash(opts.body) : EMPTY_SHA256 },
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

/**
 * Reads a stream in parts of `size` bytes. A small body is gathered chunk by chunk; past `SMALL_BODY`, bytes are
 * copied into one buffer of the part's size, which every later part reuses (its previous contents sent by then).
 */
class PartReader {
  private reader: ReadableStreamDefaultReader<Uint8Array>
  private carry: Uint8Array | null = null
  private ended = false
  private buffer: Uint8Array | null = null

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly size: number,
  ) {
    this.reader = body.getReader()
  }

  /** The next part (at most `size` bytes); `last` when the stream has nothing after it. */
  async next(): Promise<{ bytes: Uint8Array; last: boolean }> {
    const small: Uint8Array[] = []
    let target: Uint8Array | null = null
    let total = 0
    while (total < this.size) {
      const chunk = this.carry ?? (await this.read())
      this.carry = null
      if (!chunk) break
      const take = Math.min(chunk.byteLength, this.size - total)
      if (take < chunk.byteLength) this.carry = chunk.subarray(take)
      if (!target && total + take > SMALL_BODY) {
        target = this.buffer ??= new Uint8Array(this.size)
        let at = 0
        for (const c of small) {
          target.set(c, at)
          at += c.byteLength
        }
        small.length = 0
      }
      if (target) target.set(chunk.subarray(0, take), total)
      else small.push(chunk.subarray(0, take))
      total += take
    }
    // A full part: look one chunk ahead, so a body ending exactly here is one PutObject rather than a multipart.
    if (!this.carry && !this.ended) this.carry = await this.read()
    return { bytes: target ? target.subarray(0, total) : concat(small, total), last: !this.carry }
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
