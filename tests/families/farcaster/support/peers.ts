import { OAuth2Server } from 'oauth2-mock-server'
import { parseUnits, type Address, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { addressProofMessage } from '../../../../functions/farcaster/address-proof'
import { app as farcasterApp } from '../../../../functions/farcaster/app'
import { createPlatformApp } from '../../../../lib/app'
import type { Config } from '../../../../lib/config'
import { BROWSER, type Harness } from '../../../support/harness'
import { type Anvil, startAnvil } from '../../../support/anvil'
import { deployGateToken } from './chain'

export const DOMAIN = 'miniapp.example.com'
export const SERVICE_DOMAIN = 'platform.test'
export const SESSION_SECRET = 'farcaster-test-secret'
export const ONE = parseUnits('1', 18)

/**
 * Fixed holders with their keys (so a test can prove it holds one): 5 tokens, exactly the 1-token minimum,
 * one base unit short of it, and none.
 */
export const WALLETS = {
  holder: privateKeyToAccount(`0x${'a1'.repeat(32)}`),
  atMin: privateKeyToAccount(`0x${'b1'.repeat(32)}`),
  belowMin: privateKeyToAccount(`0x${'b2'.repeat(32)}`),
  nobody: privateKeyToAccount(`0x${'d1'.repeat(32)}`),
}
export const HOLDER = WALLETS.holder.address
export const AT_MIN = WALLETS.atMin.address
export const BELOW_MIN = WALLETS.belowMin.address
export const NOBODY = WALLETS.nobody.address
const walletOf = (address: string) => Object.values(WALLETS).find((w) => w.address.toLowerCase() === address.toLowerCase())!

/** `addressSignature` for `address` with this `token`: the wallet signs the family's proof message. */
export async function proveAddress(config: Config, address: string, fid: number, token: string): Promise<Hex> {
  return walletOf(address).signMessage({ message: await addressProofMessage(config, { address, fid, token }) })
}

export interface Peers {
  issuer: OAuth2Server
  issuerUrl: string
  jwksUrl: string
  /** The issuer's two signing keys: RS256 (default) and EdDSA. */
  kids: { rs256: string; eddsa: string }
  anvil: Anvil
  token: Address
  /** The harness env: this issuer, this chain, this token. */
  env: Record<string, string>
  close(): Promise<void>
}

/** A real OIDC-style issuer (oauth2-mock-server: JWKS + signing) and anvil as chain 8453 with GateToken deployed. */
export async function startPeers(): Promise<Peers> {
  const issuer = new OAuth2Server()
  // Both keys exist before the first fetch: jose refetches a key set for an unknown kid only after a 30 s cooldown.
  const rs256 = await issuer.issuer.keys.generate('RS256')
  const eddsa = await issuer.issuer.keys.generate('EdDSA')
  await issuer.start(0, '127.0.0.1')
  const issuerUrl = `http://127.0.0.1:${issuer.address().port}`
  issuer.issuer.url = issuerUrl
  const anvil = await startAnvil({ chainId: 8453 })
  const token = await deployGateToken(anvil, 1000n * ONE, [
    [HOLDER, 5n * ONE],
    [AT_MIN, ONE],
    [BELOW_MIN, ONE - 1n],
  ])
  const jwksUrl = `${issuerUrl}/jwks`
  return {
    issuer,
    issuerUrl,
    jwksUrl,
    kids: { rs256: rs256.kid, eddsa: eddsa.kid },
    anvil,
    token,
    env: {
      SERVICE_DOMAIN,
      FARCASTER_ISSUER: issuerUrl,
      FARCASTER_JWKS_URL: jwksUrl,
      FARCASTER_DOMAIN: DOMAIN,
      FARCASTER_SESSION_SECRET: SESSION_SECRET,
      BASE_RPC_URL: anvil.url,
      TOKEN_GATE_CONTRACT: token,
      TOKEN_GATE_MIN_BALANCE: '1',
    },
    async close() {
      await Promise.all([issuer.listening ? issuer.stop() : undefined, anvil.close()])
    },
  }
}

type Claims = Record<string, unknown>

/**
 * A Quick Auth-shaped ID token from the mock issuer: `sub` = fid, `aud` = DOMAIN; `claims` override or add
 * (undefined deletes). Signed with the RS256 key unless `kid` says otherwise.
 */
export function idToken(peers: Peers, fid: number | string, claims: Claims = {}, opts: { expiresIn?: number; kid?: string } = {}) {
  return peers.issuer.issuer.buildToken({
    kid: opts.kid ?? peers.kids.rs256,
    expiresIn: opts.expiresIn ?? 3600,
    scopesOrTransform: (_header, payload) => {
      Object.assign(payload, { sub: fid, aud: DOMAIN }, claims)
      for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k]
    },
  })
}

/** The family on the harness's services with some settings changed (one harness per file, many configs). */
export const farcasterWith = (h: Harness, overrides: Partial<Config>) =>
  createPlatformApp(() => ({ ...h.services, config: { ...h.services.config, ...overrides } })).route('/', farcasterApp)

type App = { request: Harness['web']['request'] }

/** A JSON request as the dashboard (or a mini app on it) sends it. */
export function call(app: App, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return app.request(path, {
    method,
    headers: { 'content-type': 'application/json', ...BROWSER, ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** Splits and checks a session token against `secret` the way a client holding the secret would. */
export async function openSessionToken(token: string, secret = SESSION_SECRET) {
  const [data, sig] = token.split('.')
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
  const valid = await crypto.subtle.verify('HMAC', key, Buffer.from(sig, 'base64url'), new TextEncoder().encode(data))
  return { valid, data: JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as { fid: number; userId: string; iat: number; exp: number } }
}

/** A session token signed independently of the family's code: `{b64url(JSON data)}.{b64url(HMAC-SHA256)}`. */
export async function signSessionToken(data: unknown, secret = SESSION_SECRET) {
  const part = Buffer.from(JSON.stringify(data)).toString('base64url')
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const sig = Buffer.from(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(part))).toString('base64url')
  return `${part}.${sig}`
}
