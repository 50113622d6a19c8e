import { and, asc, eq, gt, inArray, lte, sql } from 'drizzle-orm'
import type { Db } from '../../lib/db/rls'
import { asService } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import type { VerifiedTransfer } from '../../lib/payments/transfer'
import { chainPayments } from '../../schema/gateway'
import { radioGuestPasses, radioSessions } from '../../schema/content'

/** Spec "Limits": a DJ session lasts at most 2 hours. */
export const MAX_SESSION_SEC = 7200 as const
/** The statuses that hold a wallet's streaming slot (spec "DJ session statuses"). */
export const CURRENT_STATUSES = ['active', 'live'] as const
export type RadioSession = typeof radioSessions.$inferSelect
export type AccessPath = 'holding' | 'guest_pass' | 'payment'
/** `chain_payments.purpose` of a 5 USDC session fee. */
export const RADIO_PAYMENT_PURPOSE = 'radio_access'

const isCurrent = inArray(radioSessions.status, [...CURRENT_STATUSES])

/**
 * What decides a create before any chain or Mux call, in one transaction: the wallet's current unexpired session,
 * whether it has an unexpired guest pass, and whether `txHash` already paid for something.
 */
export function walletStanding(db: Db, wallet: string, txHash: string | undefined, now: Date) {
  return asService(db, 'radioStreams', async (tx) => {
    const [current] = await tx
      .select({ id: radioSessions.id })
      .from(radioSessions)
      .where(and(eq(radioSessions.wallet, wallet), isCurrent, gt(radioSessions.expiresAt, now)))
      .limit(1)
    // Passes are granted by operators: matched case-insensitively, whatever case they were written in.
    const [pass] = await tx
      .select({ wallet: radioGuestPasses.wallet })
      .from(radioGuestPasses)
      .where(and(sql`lower(${radioGuestPasses.wallet}) = ${wallet}`, gt(radioGuestPasses.expiresAt, now)))
      .limit(1)
    const [paid] = txHash
      ? await tx.select({ txHash: chainPayments.txHash }).from(chainPayments).where(eq(chainPayments.txHash, txHash)).limit(1)
      : []
    return { hasCurrent: !!current, hasGuestPass: !!pass, txUsed: !!paid }
  })
}

export const sessionActive = () => new ApiError('SESSION_ACTIVE')
export const paymentUsed = () => new ApiError('PAYMENT_ALREADY_USED')

export interface NewSession {
  id: string
  wallet: string
  name: string
  city: string | null
  accessPath: AccessPath
  payment?: VerifiedTransfer & { chainId: number }
  startedAt: Date
  expiresAt: Date
}

/**
 * Takes the wallet's streaming slot: one transaction that first retires the wallet's expired current session (a
 * missed expiry never holds the slot), records the payment once (its hash is the key of `chain_payments`), then
 * inserts the session. The partial unique index decides between concurrent creates: the loser's insert does
 * nothing, and it answers 409 with nothing written. Answers the retired sessions' Mux streams (to disable).
 */
export function openSession(db: Db, s: NewSession) {
  return asService(db, 'radioStreams', async (tx) => {
    const retired = await tx
      .update(radioSessions)
      .set({ status: 'auto-ended', endedAt: s.startedAt, updatedAt: s.startedAt })
      .where(and(eq(radioSessions.wallet, s.wallet), isCurrent, lte(radioSessions.expiresAt, s.startedAt)))
      .returning({ streamId: radioSessions.streamId })
    if (s.payment) {
      const p = s.payment
      const paid = await tx
        .insert(chainPayments)
        .values({
          txHash: p.txHash,
          purpose: RADIO_PAYMENT_PURPOSE,
          reference: s.id,
          chainId: p.chainId,
          token: p.token.toLowerCase(),
          payer: p.payer.toLowerCase(),
          recipient: p.recipient.toLowerCase(),
          amount: p.amount.toString(),
        })
        .onConflictDoNothing()
        .returning({ txHash: chainPayments.txHash })
      if (paid.length === 0) throw paymentUsed()
    }
    const inserted = await tx
      .insert(radioSessions)
      .values({
        id: s.id,
        wallet: s.wallet,
        name: s.name,
        city: s.city,
        status: 'active',
        accessPath: s.accessPath,
        txHash: s.payment?.txHash ?? null,
        startedAt: s.startedAt,
        expiresAt: s.expiresAt,
        updatedAt: s.startedAt,
      })
      .onConflictDoNothing()
      .returning({ id: radioSessions.id })
    // Thrown inside the transaction: the payment row above is rolled back with it.
    if (inserted.length === 0) throw sessionActive()
    return retired.map((r) => r.streamId).filter((id): id is string => !!id)
  })
}

/** Records the Mux stream a session streams to. */
export const attachStream = (db: Db, sessionId: string, streamId: string, playbackId: string) =>
  asService(db, 'radioStreams', (tx) =>
    tx.update(radioSessions).set({ streamId, playbackId, updatedAt: new Date() }).where(eq(radioSessions.id, sessionId)),
  )

/** Undoes `openSession` when its stream could not be made: the session and its payment go, nothing half-made stays. */
export const discardSession = (db: Db, sessionId: string) =>
  asService(db, 'radioStreams', async (tx) => {
    await tx.delete(chainPayments).where(and(eq(chainPayments.purpose, RADIO_PAYMENT_PURPOSE), eq(chainPayments.reference, sessionId)))
    await tx.delete(radioSessions).where(eq(radioSessions.id, sessionId))
  })

/** The session row, locked for the rest of `tx` (ending and expiring serialise on it). */
export async function lockSession(tx: Db, sessionId: string): Promise<RadioSession | undefined> {
  const [row] = await tx.select().from(radioSessions).where(eq(radioSessions.id, sessionId)).for('update')
  return row
}

/** Moves a locked current session to a final status. */
export const finishSession = (tx: Db, sessionId: string, status: 'ended' | 'archived' | 'auto-ended', at: Date) =>
  tx
    .update(radioSessions)
    .set({ status, endedAt: at, updatedAt: at })
    .where(and(eq(radioSessions.id, sessionId), isCurrent))
    .returning()

/** Current sessions past their expiry, oldest first: what the sweep ends. */
export const dueSessions = (db: Db, now: Date, limit: number) =>
  asService(db, 'radioStreams', (tx) =>
    tx
      .select({ id: radioSessions.id })
      .from(radioSessions)
      .where(and(isCurrent, lte(radioSessions.expiresAt, now)))
      .orderBy(asc(radioSessions.expiresAt))
      .limit(limit),
  )
