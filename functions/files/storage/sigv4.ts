import { sha256Hex, toHex } from '../../../lib/crypto'

/**
 * AWS Signature Version 4 for S3 requests, on Web Crypto: what lets the S3 adapter be plain `fetch` (the AWS SDK
 * client alone is ~130 KB gzipped, more than half a Worker's budget). Checked against the worked examples of the
 * S3 documentation (tests/storage/sigv4.test.ts).
 */
export interface SigningKeys {
  accessKeyId: string
  secretAccessKey: string
  region: string
}

export interface SignInput {
  method: string
  url: URL
  /** Headers to sign besides `host`, `x-amz-date` and `x-amz-content-sha256` (which this adds). */
  headers?: Record<string, string>
  /** Hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`. */
  payloadHash: string
  now?: Date
}

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

const enc = new TextEncoder()

/** The hex SHA-256 of a body, as `x-amz-content-sha256` carries it. */
export async function payloadHash(body: Uint8Array) {
  return toHex(await crypto.subtle.digest('SHA-256', body as Uint8Array<ArrayBuffer>))
}

async function hmac(key: Uint8Array | string, message: string) {
  const raw = typeof key === 'string' ? enc.encode(key) : key
  const k = await crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, enc.encode(message)))
}

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters, `/` kept when encoding a path. */
export function uriEncode(value: string, keepSlash = false) {
  return Array.from(enc.encode(value), (b) => {
    const c = String.fromCharCode(b)
    if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === '/')) return c
    return `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }).join('')
}

/** `20130524T000000Z` */
const amzDate = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')

/**
 * The headers to send with the request: the caller's, plus `x-amz-date`, `x-amz-content-sha256` and
 * `authorization`. The URL's path must already be encoded as it goes on the wire (S3 does not re-encode it).
 */
export async function signS3Request(keys: SigningKeys, input: SignInput): Promise<Record<string, string>> {
  const date = amzDate(input.now ?? new Date())
  const day = date.slice(0, 8)
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(input.headers ?? {})) headers[k.toLowerCase()] = v
  headers['x-amz-date'] = date
  headers['x-amz-content-sha256'] = input.payloadHash
  const toSign: Record<string, string> = { ...headers, host: input.url.host }

  const names = Object.keys(toSign).sort()
  const canonicalHeaders = names.map((n) => `${n}:${toSign[n].trim().replace(/\s+/g, ' ')}\n`).join('')
  const signedHeaders = names.join(';')
  const query = [...input.url.searchParams]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  const canonicalRequest = [input.method.toUpperCase(), input.url.pathname || '/', query, canonicalHeaders, signedHeaders, input.payloadHash].join('\n')

  const scope = `${day}/${keys.region}/s3/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, await sha256Hex(canonicalRequest)].join('\n')
  let key = await hmac(`AWS4${keys.secretAccessKey}`, day)
  for (const part of [keys.region, 's3', 'aws4_request']) key = await hmac(key, part)
  const signature = toHex(await hmac(key, stringToSign))

  headers.authorization = `AWS4-HMAC-SHA256 Credential=${keys.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`
  return headers
}
