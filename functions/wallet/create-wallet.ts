import { sql } from 'drizzle-orm'
import type { Context } from 'hono'
import type { Address, Hex } from 'viem'
import type { SignedInEnv } from '../../lib/context'
import { sha256, sha256Hex, toHex } from '../../lib/crypto'
import { withUser, type Db } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { log } from '../../lib/log'
import { userWallets } from '../../schema'
import { CDP_NETWORK } from './cdp'
import { type CdpAccount, type CdpClient, cdpClient, CdpError } from './cdp-client'
import { managedWalletQuery } from './owned'

/** A stored managed wallet: its CDP account's address and name (`walletId`), network and creation time. */
export interface ManagedWallet {
  address: Address
  walletId: string
  network: string
  createdAt: Date
}

/** How long a client should wait before trying CDP again, on a 503. */
const RETRY_AFTER_SEC = '30'

/**
 * Creates the caller's managed wallet: a new CDP EVM account, or (with `privateKey`) that key's account imported into
 * CDP, stored as theirs. One per user, decided in the database: the user's wallet lock (a transaction-scoped advisory
 * lock) is held from the check for an existing wallet, through the CDP call, to the insert, so concurrent creates
 * make one CDP account and store one row; the others wait, then find it (400 `WALLET_EXISTS`). The CDP call is
 * bounded (`CDP_TIMEOUT_MS`), and so is the wait.
 *
 * A retry after a lost answer makes no second account: the account's name is derived from the user (CDP names are
 * unique in a project), and a create's idempotency key too, so CDP replays the first answer for 24 hours and refuses
 * the name after that (`already_exists`), when the account is read back by name and stored. An import cannot replay
 * (its encrypted key differs each time, so it takes a fresh key): a second import meets the name the same way, and
 * the account found is stored with a 400 `WALLET_EXISTS` (this request imported nothing).
 * CDP down or refusing: 503 `WALLET_PROVIDER_UNAVAILABLE` with `Retry-After`, nothing stored. The private key is
 * used for the CDP call only: never stored, logged or answered.
 */
export async function createManagedWallet(c: Context<SignedInEnv>, opts: { privateKey?: Hex } = {}): Promise<ManagedWallet> {
  const { db, config } = c.var.services
  const userId = c.var.user.id
  const outcome = await withUser(db, userId, async (tx) => {
    await lockUserWallet(tx, userId)
    const [existing] = await managedWalletQuery(tx, userId)
    if (existing) throw new ApiError('WALLET_EXISTS')
    const cdp = await cdpClient(config)
    const name = await cdpAccountName(userId)
    const { account, adopted } = await obtainAccount(c, cdp, name, opts.privateKey)
    const [row] = await tx
      .insert(userWallets)
      .values({ userId, address: account.address, walletId: name, network: CDP_NETWORK, createdAt: account.createdAt ?? new Date() })
      .returning({ address: userWallets.address, walletId: userWallets.walletId, network: userWallets.network, createdAt: userWallets.createdAt })
    return { wallet: { ...row, address: account.address }, importRefused: adopted && opts.privateKey !== undefined }
  })
  // An import that found the user's account already in CDP: it is theirs and now stored, but this request imported
  // nothing (the account may hold another key: telling would take secp256k1 in this bundle, over its budget).
  if (outcome.importRefused) throw new ApiError('WALLET_EXISTS')
  return outcome.wallet
}

/**
 * Takes the caller's wallet lock for the rest of the transaction. Waiting for it is bounded: a holder is itself
 * bounded by the CDP deadline, so a longer wait means something is wrong (the statement then fails, 500).
 */
async function lockUserWallet(tx: Db, userId: string) {
  await tx.execute(sql`select set_config('lock_timeout', '30s', true)`)
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`wallet:${userId}`}))`)
}

/** The CDP account for `name`: created, imported, or (made by an earlier attempt whose answer was lost) read back. */
async function obtainAccount(c: Context<SignedInEnv>, cdp: CdpClient, name: string, privateKey?: Hex): Promise<{ account: CdpAccount; adopted: boolean }> {
  try {
    const account = privateKey
      ? await cdp.importAccount({ name, privateKey, idempotencyKey: crypto.randomUUID() })
      : await cdp.createAccount({ name, idempotencyKey: await cdpIdempotencyKey('create-account', c.var.user.id) })
    return { account, adopted: false }
  } catch (e) {
    if (!(e instanceof CdpError) || e.errorType !== 'already_exists') throw providerFailure(c, e)
    // Either this user's account exists (by its name), or the imported key's address is another account of the project.
    let account: CdpAccount | null
    try {
      account = await cdp.accountByName(name)
    } catch (read) {
      throw providerFailure(c, read)
    }
    if (!account) throw providerFailure(c, e)
    return { account, adopted: true }
  }
}

/** CDP's failure as the answer: 503 `WALLET_PROVIDER_UNAVAILABLE`, logged with what Coinbase support needs. */
function providerFailure(c: Context<SignedInEnv>, e: unknown): unknown {
  if (!(e instanceof CdpError)) return e
  log.error('wallet.cdp_failed', { dependency: 'cdp', requestId: c.var.requestId, status: e.status, errorType: e.errorType, correlationId: e.correlationId, message: e.message })
  const refused = e.status >= 400 && e.status < 500 && e.status !== 429
  return new ApiError('WALLET_PROVIDER_UNAVAILABLE', {
    message: refused ? 'Wallet provider refused the request' : 'Wallet provider unavailable',
    headers: { 'Retry-After': RETRY_AFTER_SEC },
  })
}

/**
 * The user's CDP account name: `u-` and 32 hex digits of SHA-256 of their id (CDP names: 2 to 36 letters, digits and
 * hyphens, unique in the project). Derived, so every attempt for one user names the same account.
 */
export const cdpAccountName = async (userId: string) => `u-${(await sha256Hex(`cdp-account:${userId}`)).slice(0, 32)}`

/**
 * An idempotency key for one user's `purpose`: SHA-256 of both, shaped as the UUID v4 CDP requires (version and
 * variant bits set), so a retry sends the same key.
 */
export async function cdpIdempotencyKey(purpose: string, userId: string): Promise<string> {
  const bytes = (await sha256(`cdp-idempotency:${purpose}:${userId}`)).slice(0, 16)
  bytes[6] = (bytes[6] & 0x0f) | 0x40
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  const hex = toHex(bytes)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
