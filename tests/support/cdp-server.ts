import { constants, createHash, generateKeyPairSync, privateDecrypt, randomUUID, type KeyObject } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { decodeProtectedHeader, jwtVerify } from 'jose'
import { getAddress, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { listen, type Loopback } from './loopback'

/**
 * A stand-in for Coinbase Developer Platform's server-wallet REST API (v2; a third-party API with no local peer) on
 * loopback, for the calls functions/wallet makes (`CDP_API_URL` points there). As CDP documents it
 * (https://docs.cdp.coinbase.com/api-reference/v2):
 *
 * - Authentication. Every request: `Authorization: Bearer <JWT>` signed with the API key (EdDSA for an Ed25519 key,
 *   ES256 for an EC key), verified with the key's public part: header `kid` the key id, claims `iss: 'cdp'`, `sub` the
 *   key id, `aud` `cdp_service`, `nbf` and `exp` (checked against the clock), and `uris` naming this request as
 *   `METHOD host/path`. A POST to an account endpoint also needs `X-Wallet-Auth`: ES256 with the Wallet Secret's key,
 *   `iat`, `nbf`, a `jti` never seen before, the same `uris`, and `reqHash` the hex SHA-256 of the body's JSON with
 *   its keys sorted. That token carries no `exp` (CDP's SDKs sign one per request): the fake's own bound is an `iat`
 *   within the last minute. Anything else is 401 `unauthorized`.
 * - Errors are `{errorType, errorMessage, correlationId, errorLink}`: 400 `invalid_request`, 401 `unauthorized`,
 *   404 `not_found`, 409 `already_exists` (an account name, or an imported address, already in the project),
 *   409 `idempotency_error` (a key reused for another request).
 * - `X-Idempotency-Key` (a UUID v4, else 400): the same key on the same request replays the first answer.
 * - `POST /platform/v2/evm/accounts {name?}` → 201 `{address, name, policies, createdAt, updatedAt}`;
 *   `POST /platform/v2/evm/accounts/import {encryptedPrivateKey, name?}`: the key RSA-OAEP (SHA-256) encrypted to the
 *   import key (a key pair of the fake's own: `CDP_IMPORT_PUBLIC_KEY` in `env`); `GET /platform/v2/evm/accounts/by-name/{name}`.
 *   Names: 2 to 36 letters, digits and hyphens, starting and ending with a letter or digit.
 *
 * Test controls: `failNext` (an error answer for the next account writes), `dropNextAnswer` (do the next write,
 * then cut the connection before answering: a lost answer), `forgetIdempotency` (past the 24 hours), `hang`.
 */

export interface FakeCdpAccount {
  address: Address
  name: string | null
  policies: string[]
  createdAt: string
  updatedAt: string
  imported: boolean
}

export interface RecordedCdpRequest {
  method: string
  path: string
  headers: IncomingMessage['headers']
  /** The body as sent, raw. */
  body: string
  status: number
}

export interface CdpServer extends Loopback {
  /** The app's settings for this fake: URL, API key (id and secret), Wallet Secret, import key, project id. */
  env: Record<string, string>
  accounts: FakeCdpAccount[]
  requests: RecordedCdpRequest[]
  /** The next `count` account writes (after authentication) answer `status` with `errorType`. */
  failNext(status: number, errorType: string, count?: number): void
  /** The next account write is done, and its answer lost (the connection is cut). */
  dropNextAnswer(): void
  /** Idempotency keys are forgotten, as they are after 24 hours. */
  forgetIdempotency(): void
  /** While on, requests are accepted and never answered. */
  hang(on: boolean): void
}

const ACCOUNTS = '/platform/v2/evm/accounts'
const NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,34}[A-Za-z0-9]$/
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i

class CdpFailure extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    message: string,
  ) {
    super(message)
  }
}

/** An Ed25519 API key as the CDP portal gives it (base64 of seed then public key), or an EC one (SEC1 PEM). */
export function cdpApiKey(type: 'ed25519' | 'ec' = 'ed25519'): { secret: string; publicKey: KeyObject } {
  if (type === 'ec') {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    return { secret: privateKey.export({ format: 'pem', type: 'sec1' }).toString(), publicKey }
  }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const jwk = privateKey.export({ format: 'jwk' })
  return { secret: Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]).toString('base64'), publicKey }
}

/** A Wallet Secret as the CDP portal gives it: base64 of a PKCS#8 DER P-256 key. */
export function cdpWalletSecret(): { secret: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return { secret: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'), publicKey }
}

/** The hex SHA-256 of the body's JSON with its keys sorted at every depth, as CDP's `reqHash`. */
function bodyHash(body: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]))
        : v
  return createHash('sha256').update(JSON.stringify(sorted(body))).digest('hex')
}

export async function startCdpServer(opts: { keyType?: 'ed25519' | 'ec' } = {}): Promise<CdpServer> {
  const apiKeyId = `organizations/${randomUUID()}/apiKeys/${randomUUID()}`
  const apiKey = cdpApiKey(opts.keyType)
  const walletSecret = cdpWalletSecret()
  const importKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const accounts: FakeCdpAccount[] = []
  const requests: RecordedCdpRequest[] = []
  const idempotency = new Map<string, { request: string; status: number; body: unknown }>()
  const seenJti = new Set<string>()
  let failures: Array<{ status: number; errorType: string }> = []
  let dropNext = false
  let hanging = false

  const accountJson = (a: FakeCdpAccount) => ({ address: a.address, name: a.name ?? undefined, policies: a.policies, createdAt: a.createdAt, updatedAt: a.updatedAt })
  const unauthorized = (why: string) => new CdpFailure(401, 'unauthorized', why)

  async function authenticate(req: IncomingMessage, path: string, body: unknown) {
    const uri = `${req.method} ${req.headers.host}${path}`
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
    if (!bearer) throw unauthorized('Missing or malformed Authorization header')
    let header
    try {
      header = decodeProtectedHeader(bearer)
    } catch {
      throw unauthorized('Malformed JWT')
    }
    const alg = opts.keyType === 'ec' ? 'ES256' : 'EdDSA'
    if (header.kid !== apiKeyId || typeof header.nonce !== 'string') throw unauthorized('Unknown API key')
    try {
      const { payload } = await jwtVerify(bearer, apiKey.publicKey, { algorithms: [alg], issuer: 'cdp', subject: apiKeyId, audience: 'cdp_service', requiredClaims: ['nbf', 'exp'] })
      if (!Array.isArray(payload.uris) || !payload.uris.includes(uri)) throw unauthorized('JWT uris claim does not match the request')
    } catch (e) {
      throw e instanceof CdpFailure ? e : unauthorized(`Invalid JWT: ${(e as Error).message}`)
    }
    if (req.method !== 'POST' && req.method !== 'DELETE') return
    const walletAuth = req.headers['x-wallet-auth']
    if (typeof walletAuth !== 'string') throw unauthorized('Missing X-Wallet-Auth header')
    try {
      const { payload } = await jwtVerify(walletAuth, walletSecret.publicKey, { algorithms: ['ES256'], maxTokenAge: '60s', requiredClaims: ['iat', 'nbf', 'jti'] })
      if (!Array.isArray(payload.uris) || !payload.uris.includes(uri)) throw unauthorized('Wallet JWT uris claim does not match the request')
      if (seenJti.has(payload.jti!)) throw unauthorized('Wallet JWT already used')
      const hasBody = body !== null && typeof body === 'object' && Object.keys(body).length > 0
      if (hasBody ? payload.reqHash !== bodyHash(body) : payload.reqHash !== undefined) throw unauthorized('Wallet JWT reqHash does not match the body')
      seenJti.add(payload.jti!)
    } catch (e) {
      throw e instanceof CdpFailure ? e : unauthorized(`Invalid wallet JWT: ${(e as Error).message}`)
    }
  }

  function addAccount(address: Address, name: string | null, imported: boolean) {
    if (accounts.some((a) => a.address === address)) throw new CdpFailure(409, 'already_exists', 'An account with this address already exists')
    if (name !== null && accounts.some((a) => a.name === name)) throw new CdpFailure(409, 'already_exists', 'An account with this name already exists')
    const now = new Date().toISOString()
    const account: FakeCdpAccount = { address, name, policies: [], createdAt: now, updatedAt: now, imported }
    accounts.push(account)
    return account
  }

  function accountName(body: Record<string, unknown>): string | null {
    if (body.name === undefined) return null
    if (typeof body.name !== 'string' || !NAME.test(body.name)) throw new CdpFailure(400, 'invalid_request', `request body has an error: doesn't match schema: Error at "name"`)
    return body.name
  }

  /** The answer to an authenticated request: [status, body]. */
  function route(method: string, path: string, body: Record<string, unknown>): [number, unknown] {
    if (method === 'POST' && path === ACCOUNTS) return [201, accountJson(addAccount(getAddress(privateKeyToAddress(generatePrivateKey())), accountName(body), false))]
    if (method === 'POST' && path === `${ACCOUNTS}/import`) {
      if (typeof body.encryptedPrivateKey !== 'string') throw new CdpFailure(400, 'invalid_request', 'encryptedPrivateKey is required')
      let key: Buffer
      try {
        key = privateDecrypt({ key: importKey.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(body.encryptedPrivateKey, 'base64'))
      } catch {
        throw new CdpFailure(400, 'invalid_request', 'Could not decrypt the private key')
      }
      if (key.length !== 32) throw new CdpFailure(400, 'invalid_request', 'Invalid private key length')
      return [201, accountJson(addAccount(privateKeyToAddress(`0x${key.toString('hex')}`), accountName(body), true))]
    }
    const byName = new RegExp(`^${ACCOUNTS}/by-name/([^/]+)$`).exec(path)
    if (method === 'GET' && byName) {
      const account = accounts.find((a) => a.name === decodeURIComponent(byName[1]))
      if (!account) throw new CdpFailure(404, 'not_found', 'EVM account not found')
      return [200, accountJson(account)]
    }
    throw new CdpFailure(404, 'not_found', 'Not found')
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const path = new URL(req.url ?? '/', 'http://cdp.invalid').pathname
    const method = req.method ?? 'GET'
    const record: RecordedCdpRequest = { method, path, headers: req.headers, body: raw, status: 0 }
    requests.push(record)
    if (hanging) return // never answered: the client's deadline ends it
    const correlationId = randomUUID()
    const answer = (status: number, body: unknown) => {
      record.status = status
      res.writeHead(status, { 'content-type': 'application/json', 'correlation-id': correlationId })
      res.end(JSON.stringify(body))
    }
    const answerError = (e: CdpFailure) =>
      answer(e.status, { errorType: e.errorType, errorMessage: e.message, correlationId, errorLink: `https://docs.cdp.coinbase.com/api-reference/v2/errors#${e.errorType}` })
    try {
      let body: Record<string, unknown> = {}
      if (raw) {
        try {
          body = JSON.parse(raw)
        } catch {
          throw new CdpFailure(400, 'invalid_request', 'Malformed JSON in request body')
        }
      }
      await authenticate(req, path, raw ? body : null)
      const key = req.headers['x-idempotency-key']
      if (key !== undefined && (typeof key !== 'string' || !UUID_V4.test(key))) throw new CdpFailure(400, 'invalid_request', 'X-Idempotency-Key must be a UUID v4')
      const fingerprint = `${method} ${path} ${bodyHash(body)}`
      if (typeof key === 'string') {
        const seen = idempotency.get(key)
        if (seen && seen.request !== fingerprint) throw new CdpFailure(409, 'idempotency_error', 'Idempotency key was already used with different request parameters')
        if (seen) return answer(seen.status, seen.body)
      }
      const write = method === 'POST'
      const failure = write ? failures.shift() : undefined
      if (failure) throw new CdpFailure(failure.status, failure.errorType, `Injected ${failure.errorType}`)
      let status: number
      let out: unknown
      try {
        ;[status, out] = route(method, path, body)
      } catch (e) {
        if (!(e instanceof CdpFailure)) throw e
        status = e.status
        out = { errorType: e.errorType, errorMessage: e.message, correlationId, errorLink: `https://docs.cdp.coinbase.com/api-reference/v2/errors#${e.errorType}` }
      }
      if (typeof key === 'string' && status < 500) idempotency.set(key, { request: fingerprint, status, body: out })
      if (write && dropNext) {
        dropNext = false
        record.status = -1
        req.socket.destroy() // done, and the answer lost on the way
        return
      }
      answer(status, out)
    } catch (e) {
      if (e instanceof CdpFailure) return answerError(e)
      answer(500, { errorType: 'internal_server_error', errorMessage: 'Internal server error', correlationId })
    }
  }

  const loopback = await listen(createServer((req, res) => void handle(req, res)))
  return {
    ...loopback,
    env: {
      CDP_API_URL: loopback.url,
      CDP_API_KEY_ID: apiKeyId,
      CDP_API_KEY_SECRET: apiKey.secret,
      CDP_WALLET_SECRET: walletSecret.secret,
      CDP_IMPORT_PUBLIC_KEY: importKey.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      CDP_PROJECT_ID: 'proj-fake',
    },
    accounts,
    requests,
    failNext(status, errorType, count = 1) {
      failures = [...failures, ...Array.from({ length: count }, () => ({ status, errorType }))]
    },
    dropNextAnswer() {
      dropNext = true
    },
    forgetIdempotency() {
      idempotency.clear()
    },
    hang(on) {
      hanging = on
    },
  }
}
