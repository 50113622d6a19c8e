import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import { deadline } from '../../../lib/deadline'
import { errorFields, log } from '../../../lib/log'
import { assertValidKey } from './keys'
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
  /** How long one call may wait for its answer's headers, the SDK's retries included (`CALL_TIMEOUT_MS` by default). */
  callTimeoutMs?: number
}

const MiB = 1024 * 1024
const MIN_PART_SIZE = 5 * MiB
const MAX_PARTS = 10_000
/** A body up to this size is gathered as it comes; past it, into one part-sized buffer reused for every part. */
const SMALL_BODY = 256 * 1024
/** Waiting for a store's answer (headers, the SDK's retries included); a download's body then streams as long as the client reads. */
const CALL_TIMEOUT_MS = 120_000

/** No signature: a bucket open to this network (e.g. a local MinIO), when no keys are configured. */
const unsigned: Pick<S3ClientConfig, 'httpAuthSchemes' | 'httpAuthSchemeProvider'> = {
  httpAuthSchemeProvider: () => [{ schemeId: 'smithy.api#noAuth' }],
  httpAuthSchemes: [{ schemeId: 'smithy.api#noAuth', identityProvider: () => async () => ({}), signer: { sign: async (request) => request } }],
}

/**
 * Any S3-compatible store through the AWS SDK's S3 client (`@aws-sdk/client-s3`). Bundled for Workers it sends with
 * `fetch` (the SDK's browser runtime, which infra/bundle.ts selects); on Node, with its Node handler. Without
 * credentials, requests go unsigned (a bucket open to this network, e.g. a local MinIO). Checksums are sent and
 * checked only where S3 requires them, as stores other than AWS (R2, MinIO) expect. Each call is bounded by
 * `deadline` (its retries included).
 *
 * `putStream` holds one part in memory: a body that ends within the first part is one PutObject, a longer one a
 * multipart upload (aborted on failure, so no partial object ever becomes visible; a crash mid-upload leaves an
 * incomplete multipart upload, which the bucket's `AbortIncompleteMultipartUpload` lifecycle rule clears).
 * Parts are sent one at a time: throughput is one part's round trip at a time, memory one part.
 */
export class S3Storage implements Storage {
  private readonly client: S3Client
  private readonly bucket: string
  private readonly minPartSize: number
  private readonly callTimeoutMs: number

  constructor(opts: S3Options) {
    const { accessKeyId, secretAccessKey } = opts
    this.client = new S3Client({
      region: opts.region,
      endpoint: opts.endpoint,
      forcePathStyle: opts.forcePathStyle,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : unsigned),
    })
    this.bucket = opts.bucket
    this.minPartSize = opts.minPartSize ?? MIN_PART_SIZE
    this.callTimeoutMs = opts.callTimeoutMs ?? CALL_TIMEOUT_MS
  }

  async put(key: string, body: Uint8Array | ArrayBuffer, contentType: string) {
    assertValidKey(key)
    const bytes = body instanceof Uint8Array ? body : new Uint8Array(body)
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType, ContentLength: bytes.byteLength })
    await this.call((bound) => this.client.send(command, bound))
  }

  /**
   * Parts are all one size (R2 requires it), the smallest that lets 10,000 parts carry `maxBytes` (5 MiB up to
   * 50 GiB): memory is one part buffer, reused, plus the copy the request makes of the part it sends.
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
      const target = { Bucket: this.bucket, Key: key }
      const { UploadId } = await this.call((bound) => this.client.send(new CreateMultipartUploadCommand({ ...target, ContentType: contentType }), bound))
      if (!UploadId) throw new Error('S3 CreateMultipartUpload answered no UploadId')
      try {
        const etags: string[] = []
        let size = 0
        for (;;) {
          if (etags.length >= MAX_PARTS) throw new Error('S3: object too large for a multipart upload')
          const PartNumber = etags.length + 1
          const upload = new UploadPartCommand({ ...target, UploadId, PartNumber, Body: part.bytes, ContentLength: part.bytes.byteLength })
          const { ETag } = await this.call((bound) => this.client.send(upload, bound))
          if (!ETag) throw new Error(`S3 UploadPart ${PartNumber} answered no ETag`)
          etags.push(ETag)
          size += part.bytes.byteLength
          if (part.last) break
          part = await parts.next() // not last before: at least one byte follows; the part's buffer is free again
        }
        // The SDK reads the answer's body too: S3 can answer 200 and still report a failure there.
        const Parts = etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 }))
        await this.call((bound) => this.client.send(new CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts } }), bound))
        return { size }
      } catch (e) {
        await this.call((bound) => this.client.send(new AbortMultipartUploadCommand({ ...target, UploadId }), bound)).catch((err) =>
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
    let res
    try {
      res = await this.call((bound) => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), bound))
    } catch (e) {
      if (isNotFound(e)) return null
      throw e
    }
    return {
      // A web ReadableStream on both runtimes (fetch's body on Workers, the Node stream converted on Node).
      body: res.Body ? (res.Body.transformToWebStream() as ReadableStream<Uint8Array>) : new Response(new Uint8Array(0)).body!,
      size: res.ContentLength ?? 0,
      contentType: res.ContentType || 'application/octet-stream',
    }
  }

  async delete(key: string) {
    assertValidKey(key)
    try {
      await this.call((bound) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), bound))
    } catch (e) {
      if (!isNotFound(e)) throw e // S3 answers 204 for a missing key; a store that answers 404 means the same
    }
  }

  /** Closes the client's connections (a Worker's store lives for one request). */
  dispose() {
    this.client.destroy()
  }

  /** One call, bounded in time (`deadline`): its answer's headers, the SDK's retries included, within `callTimeoutMs`. */
  private async call<T>(send: (bound: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> {
    const limit = deadline(this.callTimeoutMs)
    try {
      return await send({ abortSignal: limit.signal })
    } catch (e) {
      throw limit.timedOut ? limit.signal.reason : e // the SDK's AbortError says nothing of why
    } finally {
      limit.clear()
    }
  }
}

const isNotFound = (e: unknown) =>
  (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode === 404 || (e as Error | null)?.name === 'NoSuchKey'

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
