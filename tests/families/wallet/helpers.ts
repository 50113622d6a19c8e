import { createServer } from 'node:net'
import { generatePrivateKey } from 'viem/accounts'
import { expect } from 'vitest'
import type { Config } from '../../../lib/config'
import { accounts, userWallets } from '../../../schema'
import type { Harness, SeededUser } from '../../support/harness'
import { listen } from '../../support/loopback'
import { call, freshIp } from '../../support/requests'

/** A request as the dashboard sends it, from a fresh client IP (only the rate-limit test shares a counter). */
export const walletCall = (h: Harness, method: string, path: string, opts: { user?: SeededUser; body?: unknown; headers?: Record<string, string> } = {}) =>
  call(h, method, path, { ...opts, headers: { 'cf-connecting-ip': freshIp(), ...opts.headers } })

/** Gives `user` a managed wallet row, as CDP creation would. */
export async function seedManagedWallet(h: Harness, user: SeededUser, address: string, walletId = `wallet-${crypto.randomUUID()}`) {
  await h.db.insert(userWallets).values({ userId: user.id, address, walletId, network: 'base' })
  return walletId
}

/** Links `address` to `user` as wallet sign-in does (provider `wallet`, the lower-case address as subject). */
export async function seedWalletSignIn(h: Harness, user: SeededUser, address: string) {
  await h.db.insert(accounts).values({ userId: user.id, provider: 'wallet', providerAccountId: address.toLowerCase() })
}

/** An error answer: its status and `{error, code}`. */
export async function expectError(res: Response, status: number, code: string, error?: string | RegExp) {
  const body = (await res.json()) as { error: string; code: string }
  expect(res.status, JSON.stringify(body)).toBe(status)
  expect(body.code).toBe(code)
  if (error !== undefined) expect(body.error).toMatch(error)
  return body
}

/** A loopback "RPC" that accepts connections and never answers: the deadline must end the request. */
export const silentServer = () => listen(createServer())

export const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7'
export const CDP_ENV = { CDP_API_KEY_ID: 'organizations/test/apiKeys/test', CDP_API_KEY_SECRET: 'cdp-test-secret', CDP_PROJECT_ID: 'proj-test' }

/** Runs `fn` with `patch` over the harness's config (a CDP that is down, other credentials), then puts it back. */
export async function withConfig<T>(h: Harness, patch: Partial<Record<keyof Config, string | undefined>>, fn: () => T | Promise<T>): Promise<T> {
  const config = h.services.config as unknown as Record<string, unknown>
  const saved = Object.fromEntries(Object.keys(patch).map((k) => [k, config[k]]))
  Object.assign(config, patch)
  try {
    return await fn()
  } finally {
    Object.assign(config, saved)
  }
}

/** The three routes that create a managed wallet (and the import form of the third): name, path, body for an email. */
export const WALLET_CREATES = [
  ['POST /api/wallet create', '/api/wallet', () => ({ action: 'create' })],
  ['POST /api/wallet/create', '/api/wallet/create', (email: string) => ({ email })],
  ['POST /api/wallet/cdp', '/api/wallet/cdp', () => ({})],
  ['POST /api/wallet/cdp with a key', '/api/wallet/cdp', () => ({ privateKey: generatePrivateKey() })],
] as const
