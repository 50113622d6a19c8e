import { eq, like } from 'drizzle-orm'
import type { LocalAccount } from 'viem'
import { createSiweMessage, type SiweMessage } from 'viem/siwe'
import { mailOutbox, users } from '../../../schema'
import { BROWSER, type Harness } from '../../support/harness'

/** The harness's first APP_ORIGIN and its host: what a dashboard-issued message names. */
export const ORIGIN = 'http://localhost:3000'
export const DOMAIN = 'localhost:3000'

// A fresh client IP per request unless a test says otherwise: the per-IP limits stay out of the way.
let ipCount = 0
export const nextIp = () => {
  const n = ipCount++
  return `198.18.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`
}

/** Limits use epoch-aligned fixed windows: start a counting test well inside one, not at its edge. */
export async function inFreshWindow(windowSec: number, margin = 5_000) {
  const left = windowSec * 1000 - (Date.now() % (windowSec * 1000))
  if (left < margin) await new Promise((r) => setTimeout(r, left + 50))
}

export async function getNonce(h: Harness, method: 'GET' | 'POST' = 'GET', ip = nextIp()) {
  const res = await h.web.request('/api/auth/nonce', { method, headers: { ...BROWSER, 'cf-connecting-ip': ip } })
  if (res.status !== 200) throw new Error(`nonce: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { nonce: string }).nonce
}

export const siweMessage = (address: string, nonce: string, over: Partial<SiweMessage> = {}) =>
  createSiweMessage({ domain: DOMAIN, uri: ORIGIN, version: '1', chainId: 8453, address: address as `0x${string}`, nonce, issuedAt: new Date(), ...over })

/** The documented Tempo format, written out here rather than imported, so the tests pin the contract. */
export const tempoMessage = (address: string, nonce: string, over: { domain?: string; chainId?: number; issuedAt?: Date } = {}) =>
  `${over.domain ?? DOMAIN} wants you to sign in with your wallet.\n\nAddress: ${address}\n` +
  `Chain ID: ${over.chainId ?? 4217}\nNonce: ${nonce}\nIssued At: ${(over.issuedAt ?? new Date()).toISOString()}`

export const postWalletAuth = (h: Harness, body: unknown, headers: Record<string, string> = {}) =>
  h.web.request('/api/wallet-auth', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...BROWSER, 'cf-connecting-ip': nextIp(), ...headers },
    body: JSON.stringify(body),
  })

/** Posts `message` for `address`, personal_signed by `signer` (who may not be the address's owner). */
export const postSigned = async (h: Harness, address: string, message: string, signer: LocalAccount, extra: Record<string, unknown> = {}) =>
  postWalletAuth(h, { address, message, signature: await signer.signMessage({ message }), ...extra })

/** EOA sign-in on Base: nonce, SIWE message (with overrides), personal_sign, post. */
export async function signInBase(h: Harness, account: LocalAccount, over: Partial<SiweMessage> = {}) {
  const nonce = await getNonce(h)
  const message = siweMessage(account.address, nonce, over)
  const signature = await account.signMessage({ message })
  const body = { address: account.address, message, signature }
  return { res: await postWalletAuth(h, body), body, nonce }
}

export async function signInTempo(h: Harness, account: LocalAccount, over: Parameters<typeof tempoMessage>[2] = {}) {
  const nonce = await getNonce(h)
  const message = tempoMessage(account.address, nonce, over)
  const signature = await account.signMessage({ message })
  const body = { address: account.address, message, signature, chain: 'tempo' }
  return { res: await postWalletAuth(h, body), body, nonce }
}

export const walletEmail = (address: string) => `${address.toLowerCase()}@wallet.localhost`
export const usersWithEmail = (h: Harness, email: string) => h.db.select().from(users).where(eq(users.email, email))
export const welcomeMails = (h: Harness, email: string) => h.db.select().from(mailOutbox).where(eq(mailOutbox.to, email))
export const walletUserCount = async (h: Harness) => (await h.db.select({ id: users.id }).from(users).where(like(users.email, '%@wallet.%'))).length

/** The `name=value` part of the session Set-Cookie. */
export const sessionCookie = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

export async function expectRefused(res: Response, status: number, code: string) {
  const body = (await res.json()) as { error: string; code?: string }
  if (res.status !== status || body.code !== code) throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(body)}`)
  if (res.headers.get('set-cookie')) throw new Error('a refused sign-in set a cookie')
  return body
}
