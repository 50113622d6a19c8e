import { getAddress, isAddress, type Address, type Hex } from 'viem'
import type { Config } from '../../lib/config'
import { deadline } from '../../lib/deadline'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { CDP_IMPORT_PUBLIC_KEY, CDP_NOT_CONFIGURED } from './cdp'
import { bearerToken, CdpCredentialsError, importApiKey, importWalletSecret, walletAuthToken, type CdpSigningKey } from './cdp-auth'

/**
 * The three calls of CDP's server-wallet REST API (v2, https://docs.cdp.coinbase.com/api-reference/v2) that managed
 * wallets need, over fetch: create an EVM account, import one, read one by name. Every request is signed
 * (./cdp-auth.ts) and bounded by `CDP_TIMEOUT_MS`. Not `@coinbase/cdp-sdk`: it is not installed, it signs with
 * Node's crypto module, and its generated client carries every CDP resource into the bundle.
 */

/** One call (the answer's body included) gets this long unless `CDP_TIMEOUT_MS` says otherwise; a hung CDP is a 503, never a hang. */
export const CDP_TIMEOUT_MS = 8_000

const ACCOUNTS = '/platform/v2/evm/accounts'

/** An EVM account as CDP answers it (`{address, name, policies, createdAt, updatedAt}`; the fields used here). */
export interface CdpAccount {
  address: Address
  name: string | null
  createdAt: Date | null
}

/**
 * CDP did not answer (`status` 0: unreachable or out of time), or answered an error: its HTTP status and, from its
 * error body `{errorType, errorMessage, correlationId, errorLink}`, the type and the id Coinbase support asks for.
 * `errorMessage` is not kept: it may describe the request.
 */
export class CdpError extends Error {
  override name = 'CdpError'
  constructor(
    readonly status: number,
    readonly errorType: string | null,
    readonly correlationId: string | null,
    message: string,
  ) {
    super(message)
  }
}

export interface CdpClient {
  /** `POST /v2/evm/accounts {name}`; the same `idempotencyKey` (a UUID v4) replays the first answer for 24 hours. */
  createAccount(opts: { name: string; idempotencyKey: string }): Promise<CdpAccount>
  /** `POST /v2/evm/accounts/import {encryptedPrivateKey, name}`: the key leaves encrypted to CDP's enclave key. */
  importAccount(opts: { name: string; privateKey: Hex; idempotencyKey: string }): Promise<CdpAccount>
  /** `GET /v2/evm/accounts/by-name/{name}`; null when CDP has no account by that name. */
  accountByName(name: string): Promise<CdpAccount | null>
}

type CdpConfig = Pick<Config, 'CDP_API_KEY_ID' | 'CDP_API_KEY_SECRET' | 'CDP_WALLET_SECRET' | 'CDP_API_URL' | 'CDP_IMPORT_PUBLIC_KEY'> & Partial<Pick<Config, 'CDP_TIMEOUT_MS'>>

/**
 * The client for this deployment's CDP project. Without the API key: 500 `CDP not configured` (the spec's answer);
 * without the Wallet Secret, which every account write is signed with, or with credentials that do not import:
 * 503 `NOT_CONFIGURED` (logged, never shown). `now` (Unix ms) dates the request tokens.
 */
export async function cdpClient(config: CdpConfig, opts: { now?: () => number } = {}): Promise<CdpClient> {
  const { CDP_API_KEY_ID: apiKeyId, CDP_API_KEY_SECRET: apiKeySecret, CDP_WALLET_SECRET: walletSecret } = config
  if (!apiKeyId || !apiKeySecret) throw new ApiError('MISCONFIGURED', CDP_NOT_CONFIGURED)
  if (!walletSecret) throw new ApiError('NOT_CONFIGURED', 'CDP wallet secret not configured')
  let apiKey: CdpSigningKey
  let walletKey: CryptoKey
  try {
    ;[apiKey, walletKey] = await Promise.all([importApiKey(apiKeySecret), importWalletSecret(walletSecret)])
  } catch (e) {
    log.error('wallet.cdp_credentials_invalid', errorFields(e))
    throw new ApiError('NOT_CONFIGURED', 'CDP credentials are not usable')
  }
  const now = opts.now ?? Date.now
  const timeoutMs = config.CDP_TIMEOUT_MS ?? CDP_TIMEOUT_MS
  const base = new URL(config.CDP_API_URL)
  const prefix = base.pathname.replace(/\/+$/, '')

  async function call(method: 'GET' | 'POST', path: string, extra: { body?: Record<string, unknown>; idempotencyKey?: string; missingOk?: boolean } = {}) {
    const signed = { method, host: base.host, path: `${prefix}${path}`, body: extra.body, now: now() }
    const headers: Record<string, string> = { authorization: `Bearer ${await bearerToken(apiKeyId!, apiKey, signed)}`, accept: 'application/json' }
    if (method === 'POST') {
      headers['content-type'] = 'application/json'
      headers['x-wallet-auth'] = await walletAuthToken(walletKey, signed)
    }
    if (extra.idempotencyKey) headers['x-idempotency-key'] = extra.idempotencyKey
    const bound = deadline(timeoutMs)
    try {
      let res: Response
      try {
        res = await fetch(new URL(signed.path, base), { method, headers, body: extra.body && JSON.stringify(extra.body), signal: bound.signal })
      } catch {
        throw new CdpError(0, null, null, bound.timedOut ? `CDP did not answer within ${timeoutMs} ms` : 'CDP unreachable')
      }
      const json = (await res.json().catch(() => null)) as Record<string, unknown> | null
      if (res.status === 404 && extra.missingOk) return null
      if (!res.ok) {
        const errorType = typeof json?.errorType === 'string' ? json.errorType : null
        const correlationId = typeof json?.correlationId === 'string' ? json.correlationId : null
        throw new CdpError(res.status, errorType, correlationId, `CDP answered ${res.status} (${errorType ?? 'no error type'}) to ${method} ${path}`)
      }
      return accountOf(json, res.status)
    } catch (e) {
      if (e instanceof CdpError) throw e
      throw new CdpError(0, null, null, bound.timedOut ? `CDP did not answer within ${timeoutMs} ms` : 'CDP answer unreadable')
    } finally {
      bound.clear()
    }
  }

  return {
    createAccount: async ({ name, idempotencyKey }) => (await call('POST', ACCOUNTS, { body: { name }, idempotencyKey }))!,
    async importAccount({ name, privateKey, idempotencyKey }) {
      let encryptedPrivateKey: string
      try {
        encryptedPrivateKey = await encryptPrivateKey(config.CDP_IMPORT_PUBLIC_KEY ?? CDP_IMPORT_PUBLIC_KEY, privateKey)
      } catch (e) {
        log.error('wallet.cdp_credentials_invalid', errorFields(e))
        throw new ApiError('NOT_CONFIGURED', 'CDP credentials are not usable')
      }
      return (await call('POST', `${ACCOUNTS}/import`, { body: { encryptedPrivateKey, name }, idempotencyKey }))!
    },
    accountByName: (name) => call('GET', `${ACCOUNTS}/by-name/${encodeURIComponent(name)}`, { missingOk: true }),
  }
}

/** An EVM account from CDP's answer; anything without a valid address is CDP failing the call. */
function accountOf(json: Record<string, unknown> | null, status: number): CdpAccount {
  if (typeof json?.address !== 'string' || !isAddress(json.address, { strict: false })) throw new CdpError(status, null, null, 'CDP answered without an account address')
  const createdAt = typeof json.createdAt === 'string' ? new Date(json.createdAt) : null
  return {
    address: getAddress(json.address),
    name: typeof json.name === 'string' ? json.name : null,
    createdAt: createdAt && !Number.isNaN(createdAt.getTime()) ? createdAt : null,
  }
}

/**
 * The 32 key bytes encrypted with RSA-OAEP (SHA-256) to `publicKeyPem`, base64: CDP's import format, what its SDKs
 * send. OAEP is randomised, so each encryption differs.
 */
export async function encryptPrivateKey(publicKeyPem: string, privateKey: Hex): Promise<string> {
  let key: CryptoKey
  try {
    const der = Uint8Array.from(atob(publicKeyPem.replace(/\\n/g, '\n').replace(/-----[^-]+-----/g, '').replace(/\s+/g, '')), (c) => c.charCodeAt(0))
    key = await crypto.subtle.importKey('spki', der, { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['encrypt'])
  } catch {
    throw new CdpCredentialsError('CDP_IMPORT_PUBLIC_KEY is not a PEM RSA public key')
  }
  const hex = privateKey.slice(2)
  const bytes = Uint8Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16))
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, key, bytes))
  return btoa(String.fromCharCode(...sealed))
}
