import { base64url, SignJWT } from 'jose'
import { randomHex, sha256Hex } from '../../lib/crypto'

/**
 * Request signing for CDP's REST API (v2), as Coinbase documents it and its SDKs do (`@coinbase/cdp-sdk/auth`):
 *
 * - every request carries `Authorization: Bearer <JWT>` signed with the API key secret: EdDSA for an Ed25519 key
 *   (base64 of the 32-byte seed then the 32-byte public key), ES256 for an EC key (PEM, SEC1 or PKCS#8); header
 *   `{alg, kid: keyId, typ: 'JWT', nonce}`, claims `sub` the key id, `iss: 'cdp'`, `aud: ['cdp_service']`,
 *   `uris: ['METHOD host/path']`, `iat`/`nbf` now and `exp` two minutes on;
 * - a POST or DELETE on an account endpoint also carries `X-Wallet-Auth: <JWT>` signed ES256 with the Wallet Secret
 *   (base64 of a PKCS#8 DER P-256 key): claims `uris`, `iat`, `nbf`, a fresh `jti`, and `reqHash`, the hex SHA-256
 *   of the body's JSON with its keys sorted (left out for an empty body).
 *
 * WebCrypto only (Workers): the keys are imported per request, a few microseconds each.
 */

/** The API key: EdDSA (Ed25519) or ES256 (P-256), and the key to sign with. */
export interface CdpSigningKey {
  alg: 'EdDSA' | 'ES256'
  key: CryptoKey
}

/** The credentials did not parse: the deployment's CDP settings are wrong (never a caller's fault). */
export class CdpCredentialsError extends Error {
  override name = 'CdpCredentialsError'
}

/** A JWT lives this long (CDP refuses a Bearer token past its `exp`; its SDKs sign for 120 s). */
export const CDP_JWT_TTL_SEC = 120

const PEM = /-----BEGIN ([A-Z ]+)-----([\s\S]+?)-----END \1-----/

/** The API key secret: an Ed25519 key (base64, 64 bytes) or an EC P-256 key in PEM. */
export async function importApiKey(secret: string): Promise<CdpSigningKey> {
  // Secrets pasted into an environment often carry their newlines as `\n`.
  const text = secret.replace(/\\n/g, '\n').trim()
  const pem = PEM.exec(text)
  try {
    if (pem) {
      const der = fromBase64(pem[2])
      if (pem[1] === 'EC PRIVATE KEY') return { alg: 'ES256', key: await importP256(sec1ToPkcs8(der)) }
      if (pem[1] === 'PRIVATE KEY') return { alg: 'ES256', key: await importP256(der) }
      throw new CdpCredentialsError(`CDP_API_KEY_SECRET: a PEM ${pem[1]} is not an EC private key`)
    }
    const raw = fromBase64(text)
    if (raw.length !== 64) throw new CdpCredentialsError('CDP_API_KEY_SECRET: neither a PEM EC key nor a base64 Ed25519 key (64 bytes)')
    const jwk = { kty: 'OKP', crv: 'Ed25519', d: base64url.encode(raw.subarray(0, 32)), x: base64url.encode(raw.subarray(32)) }
    return { alg: 'EdDSA', key: await crypto.subtle.importKey('jwk', jwk, { name: 'Ed25519' }, false, ['sign']) }
  } catch (e) {
    throw e instanceof CdpCredentialsError ? e : new CdpCredentialsError(`CDP_API_KEY_SECRET does not import: ${(e as Error).name}`)
  }
}

/** The Wallet Secret: base64 of a PKCS#8 DER P-256 private key, as the CDP portal issues it. */
export async function importWalletSecret(secret: string): Promise<CryptoKey> {
  try {
    return await importP256(fromBase64(secret.trim()))
  } catch {
    throw new CdpCredentialsError('CDP_WALLET_SECRET is not a base64 PKCS#8 EC P-256 key')
  }
}

export interface SignedRequest {
  method: string
  /** The API's host as the request names it (`api.cdp.coinbase.com`, or `host:port`). */
  host: string
  path: string
  /** The JSON body, when there is one: `reqHash` covers it. */
  body?: Record<string, unknown>
  /** Unix milliseconds: the tokens' `iat`/`nbf` (`exp` two minutes on). */
  now: number
}

/** `METHOD host/path`: what both tokens' `uris` claim names. */
export const requestUri = (r: Pick<SignedRequest, 'method' | 'host' | 'path'>) => `${r.method} ${r.host}${r.path}`

/** The Bearer token for one request. */
export async function bearerToken(apiKeyId: string, key: CdpSigningKey, r: SignedRequest): Promise<string> {
  const now = Math.floor(r.now / 1000)
  return new SignJWT({ sub: apiKeyId, iss: 'cdp', aud: ['cdp_service'], uris: [requestUri(r)] })
    .setProtectedHeader({ alg: key.alg, kid: apiKeyId, typ: 'JWT', nonce: randomHex(16) })
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + CDP_JWT_TTL_SEC)
    .sign(key.key)
}

/** The `X-Wallet-Auth` token for one account write. */
export async function walletAuthToken(walletKey: CryptoKey, r: SignedRequest): Promise<string> {
  const now = Math.floor(r.now / 1000)
  const claims: Record<string, unknown> = { uris: [requestUri(r)] }
  if (r.body && Object.keys(r.body).length > 0) claims.reqHash = await requestHash(r.body)
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).setIssuedAt(now).setNotBefore(now).setJti(randomHex(16)).sign(walletKey)
}

/** The hex SHA-256 of `body` as JSON with every object's keys sorted (CDP's `reqHash`). */
export const requestHash = (body: Record<string, unknown>) => sha256Hex(JSON.stringify(sortKeys(body)))

/** `value` with every object's keys in sorted order, at every depth (arrays keep their order). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== 'object') return value
  const sorted: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key])
  return sorted
}

const importP256 = (pkcs8: Uint8Array<ArrayBuffer>) => crypto.subtle.importKey('pkcs8', pkcs8, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])

const fromBase64 = (text: string) => Uint8Array.from(atob(text.replace(/\s+/g, '')), (c) => c.charCodeAt(0))

/** A DER length: short form under 128, else the long form. */
function derLength(n: number): number[] {
  if (n < 0x80) return [n]
  const bytes: number[] = []
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff)
  return [0x80 | bytes.length, ...bytes]
}

/** `id-ecPublicKey` with the `prime256v1` curve: the AlgorithmIdentifier of a PKCS#8 P-256 key. */
const P256_ALGORITHM = [0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]

/**
 * A SEC1 `ECPrivateKey` (PEM `EC PRIVATE KEY`, the form CDP's portal downloads) wrapped as PKCS#8 `PrivateKeyInfo`,
 * the only EC private key form WebCrypto imports: SEQUENCE { INTEGER 0, AlgorithmIdentifier, OCTET STRING sec1 }.
 */
function sec1ToPkcs8(sec1: Uint8Array): Uint8Array<ArrayBuffer> {
  const octets = [0x04, ...derLength(sec1.length), ...sec1]
  const body = [0x02, 0x01, 0x00, ...P256_ALGORITHM, ...octets]
  return Uint8Array.from([0x30, ...derLength(body.length), ...body])
}
