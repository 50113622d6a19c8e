import { and, eq, getTableColumns, gt, inArray, sql } from 'drizzle-orm'
import type { Db } from '../db/rls'
import { asService, type Reader } from '../db/rls'
import { chainPayments, paymentSessions, paymentSessionVouchers, walletTopUps } from '../../schema'
import type { VerifiedTransfer } from './transfer'

/**
 * Payment sessions in the database (schema/gateway.ts), all as the service (`gatewayPayments`: anonymous wallets,
 * no user). Amounts are the token's base units; wallet addresses are stored lower-case.
 */
export type PaymentSession = typeof paymentSessions.$inferSelect & { lastNonce?: string | null }

/** Session ids are the server's UUIDs: anything else is unknown without a query. */
export const isSessionId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)

const num = (n: bigint) => sql`${n.toString()}::numeric`

/**
 * Records the deposit (`chain_payments`, purpose `session_deposit`) and opens its session, in one transaction.
 * Null when the transaction hash already paid for something (a deposit opens one session, ever): the hash is
 * the primary key, so of concurrent opens with one hash exactly one inserts, the others wait and find it taken.
 */
export function openSession(db: Db, deposit: VerifiedTransfer & { chainId: number }): Promise<PaymentSession | null> {
  const id = crypto.randomUUID()
  return asService(db, 'gatewayPayments', async (tx) => {
    const [payment] = await tx
      .insert(chainPayments)
      .values({
        txHash: deposit.txHash,
        purpose: 'session_deposit',
        reference: id,
        chainId: deposit.chainId,
        token: deposit.token.toLowerCase(),
        payer: deposit.payer.toLowerCase(),
        recipient: deposit.recipient.toLowerCase(),
        amount: deposit.amount.toString(),
      })
      .onConflictDoNothing()
      .returning({ txHash: chainPayments.txHash })
    if (!payment) return null
    const [session] = await tx
      .insert(paymentSessions)
      .values({
        id,
        walletAddress: deposit.payer.toLowerCase(),
        depositTxHash: deposit.txHash,
        chainId: deposit.chainId,
        token: deposit.token.toLowerCase(),
        depositAmount: deposit.amount.toString(),
      })
      .returning()
    return session
  })
}

/** A paid card top-up of `wallet`'s prepaid gateway balance. */
export interface CardTopUp {
  /** The Checkout Session id: the payment, applied once. */
  paymentId: string
  userId: string
  wallet: string
  amountCents: number
  chainId: number
  token: string
  /** The token's decimals (1 token = 1 USD): `amountCents` becomes `amountCents * 10^decimals / 100` base units. */
  decimals: number
}

/** USD cents as base units of a token with `decimals` decimals, counted 1 token = 1 USD. */
export const centsToBaseUnits = (cents: number, decimals: number) => (BigInt(cents) * 10n ** BigInt(decimals)) / 100n

/**
 * Credits a paid card top-up to `wallet`'s card-funded session, once per payment, inside the caller's service
 * transaction (the Stripe webhook's or checkout verify's). The wallet's one `card` session is found or made first
 * (`INSERT ... ON CONFLICT` on its partial unique index, which also takes its row lock, so concurrent top-ups of one
 * wallet queue there and never make two); then the payment's `wallet_top_ups` row, whose primary key is the payment
 * id, so of concurrent deliveries of one payment exactly one inserts; only that one adds the amount. Null when the
 * payment was already credited; else the session and what it holds now.
 */
export async function creditCardTopUp(tx: Db, topUp: CardTopUp): Promise<{ sessionId: string; depositAmount: string } | null> {
  const wallet = topUp.wallet.toLowerCase()
  const [session] = await tx
    .insert(paymentSessions)
    .values({ walletAddress: wallet, source: 'card', chainId: topUp.chainId, token: topUp.token.toLowerCase(), depositAmount: '0' })
    .onConflictDoUpdate({ target: paymentSessions.walletAddress, targetWhere: sql`source = 'card'`, set: { walletAddress: sql`excluded.wallet_address` } })
    .returning({ id: paymentSessions.id })
  const [recorded] = await tx
    .insert(walletTopUps)
    .values({ paymentId: topUp.paymentId, userId: topUp.userId, walletAddress: wallet, amountCents: topUp.amountCents, sessionId: session.id })
    .onConflictDoNothing()
    .returning({ paymentId: walletTopUps.paymentId })
  if (!recorded) return null
  const [funded] = await tx
    .update(paymentSessions)
    .set({ depositAmount: sql`${paymentSessions.depositAmount} + ${num(centsToBaseUnits(topUp.amountCents, topUp.decimals))}`, updatedAt: sql`now()` })
    .where(eq(paymentSessions.id, session.id))
    .returning({ depositAmount: paymentSessions.depositAmount })
  return { sessionId: session.id, depositAmount: funded.depositAmount }
}

/** The card-funded sessions `ids` (a user's own top-ups name them), with their balances. */
export function cardSessions(reader: Reader, ids: string[]): Promise<PaymentSession[]> {
  if (ids.length === 0) return Promise.resolve([])
  return reader.asService('gatewayPayments', (db) =>
    db.select().from(paymentSessions).where(and(inArray(paymentSessions.id, ids), eq(paymentSessions.source, 'card'))),
  )
}

/** The session `id` if `wallet` owns it, with the highest voucher nonce it accepted (null before the first). */
export async function findSession(reader: Reader, id: string, wallet: string): Promise<PaymentSession | null> {
  if (!isSessionId(id)) return null
  const rows = await reader.asService('gatewayPayments', (db) =>
    db
      .select({
        ...getTableColumns(paymentSessions),
        lastNonce: sql<string | null>`(select max(${paymentSessionVouchers.nonce})::text from ${paymentSessionVouchers} where ${paymentSessionVouchers.sessionId} = ${paymentSessions.id})`,
      })
      .from(paymentSessions)
      .where(and(eq(paymentSessions.id, id), eq(paymentSessions.walletAddress, wallet.toLowerCase())))
      .limit(1),
  )
  return rows[0] ?? null
}

/**
 * The session the deposit `txHash` opened, when `wallet` owns it: a payer whose `POST` lost the race (to a
 * retry of its own, or to anyone who copied the public hash first) can still learn its session id.
 */
export async function sessionOpenedBy(reader: Reader, txHash: string, wallet: string): Promise<PaymentSession | null> {
  const [payment] = await reader.asService('gatewayPayments', (db) =>
    db
      .select({ reference: chainPayments.reference })
      .from(chainPayments)
      .where(and(eq(chainPayments.txHash, txHash.toLowerCase()), eq(chainPayments.purpose, 'session_deposit')))
      .limit(1),
  )
  return payment ? findSession(reader, payment.reference, wallet) : null
}

/** Why a debit was refused. `unknown`: no such session for that wallet. */
export type DebitRefusal =
  | { reason: 'unknown' }
  | { reason: 'short'; deposit: bigint; spent: bigint }
  | { reason: 'cumulative'; deposit: bigint; spent: bigint }
  | { reason: 'nonce_used' }

class Refused extends Error {
  constructor(readonly refusal: DebitRefusal) {
    super(refusal.reason)
  }
}

export interface DebitClaim {
  sessionId: string
  wallet: string
  /** The price, in base units. */
  amount: bigint
  cumulativeAmount: bigint
  nonce: bigint
  pluginId: string
}

/**
 * Takes `amount` from the session against a voucher, atomically: one transaction holding a conditional UPDATE
 * (`spent + amount <= deposit` and `<= cumulativeAmount`, checked by Postgres on the row as it is when the row
 * lock is granted, so racing debits never overspend) and the nonce's row (its primary key makes it single-use;
 * a reused nonce rolls the debit back). Answers the session's deposit and spent after the debit, or the refusal.
 * A refused debit changes nothing: its nonce stays free.
 */
export async function debitSession(db: Db, claim: DebitClaim): Promise<{ deposit: bigint; spent: bigint } | DebitRefusal> {
  const mine = and(eq(paymentSessions.id, claim.sessionId), eq(paymentSessions.walletAddress, claim.wallet.toLowerCase()))
  const debit = (tx: Db) =>
    tx
      .update(paymentSessions)
      .set({ spentAmount: sql`${paymentSessions.spentAmount} + ${num(claim.amount)}`, updatedAt: sql`now()` })
      .where(
        and(
          mine,
          sql`${paymentSessions.spentAmount} + ${num(claim.amount)} <= ${paymentSessions.depositAmount}`,
          sql`${paymentSessions.spentAmount} + ${num(claim.amount)} <= ${num(claim.cumulativeAmount)}`,
        ),
      )
      .returning({ deposit: paymentSessions.depositAmount, spent: paymentSessions.spentAmount })
  try {
    return await asService(db, 'gatewayPayments', async (tx) => {
      let [row] = await debit(tx)
      if (!row) {
        // Why not: read the row under its lock. A refund that landed in between can make it fit now; the
        // lock then guarantees the retried debit passes.
        const [now] = await tx
          .select({ deposit: paymentSessions.depositAmount, spent: paymentSessions.spentAmount })
          .from(paymentSessions)
          .where(mine)
          .for('update')
        if (!now) throw new Refused({ reason: 'unknown' })
        const [deposit, spent] = [BigInt(now.deposit), BigInt(now.spent)]
        if (spent + claim.amount > deposit) throw new Refused({ reason: 'short', deposit, spent })
        if (spent + claim.amount > claim.cumulativeAmount) throw new Refused({ reason: 'cumulative', deposit, spent })
        ;[row] = await debit(tx)
        if (!row) throw new Error('payment session debit missed under its own lock')
      }
      const [voucher] = await tx
        .insert(paymentSessionVouchers)
        .values({
          sessionId: claim.sessionId,
          nonce: claim.nonce.toString(),
          cumulativeAmount: claim.cumulativeAmount.toString(),
          amount: claim.amount.toString(),
          pluginId: claim.pluginId,
        })
        .onConflictDoNothing()
        .returning({ nonce: paymentSessionVouchers.nonce })
      if (!voucher) throw new Refused({ reason: 'nonce_used' })
      return { deposit: BigInt(row.deposit), spent: BigInt(row.spent) }
    })
  } catch (e) {
    if (e instanceof Refused) return e.refusal
    throw e
  }
}

/**
 * Gives back the `amount` the voucher `nonce` took (a plugin that could not serve the call), once: the voucher's
 * `amount` becomes 0 in the same transaction as the credit, so a second refund finds nothing to give back. The
 * nonce stays used. True when something was given back.
 */
export function refundDebit(db: Db, refund: { sessionId: string; nonce: bigint; amount: bigint }): Promise<boolean> {
  return asService(db, 'gatewayPayments', async (tx) => {
    // The session's row lock first, as a debit takes it: a debit replaying this nonce and this refund then
    // queue on one lock instead of each waiting for the other's.
    await tx.select({ id: paymentSessions.id }).from(paymentSessions).where(eq(paymentSessions.id, refund.sessionId)).for('update')
    const [voucher] = await tx
      .update(paymentSessionVouchers)
      .set({ amount: '0' })
      .where(
        and(
          eq(paymentSessionVouchers.sessionId, refund.sessionId),
          eq(paymentSessionVouchers.nonce, refund.nonce.toString()),
          eq(paymentSessionVouchers.amount, refund.amount.toString()),
          gt(paymentSessionVouchers.amount, '0'),
        ),
      )
      .returning({ nonce: paymentSessionVouchers.nonce })
    if (!voucher) return false
    await tx
      .update(paymentSessions)
      .set({ spentAmount: sql`${paymentSessions.spentAmount} - ${num(refund.amount)}`, updatedAt: sql`now()` })
      .where(eq(paymentSessions.id, refund.sessionId))
    return true
  })
}
