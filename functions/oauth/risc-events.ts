import { and, eq, inArray, isNull, or } from 'drizzle-orm'
import type { Db } from '../../lib/db/rls'
import { asService } from '../../lib/db/rls'
import { sameIssuer } from './oidc'
import { accounts, securityEvents, users } from '../../schema'
import { deleteSessions, type EndedSession } from '../../lib/auth/session-bound'

/** Google Cross-Account Protection (RISC) event types: https://developers.google.com/identity/protocols/risc */
export const RISC_EVENT = 'https://schemas.openid.net/secevent/risc/event-type/'
export const RISC_QUEUE_PATH = '/api/queue/risc'

type Subject = { subject_type?: unknown; iss?: unknown; sub?: unknown; email?: unknown }
type EventBody = { subject?: Subject; reason?: unknown }

/** The subject a token names, for the event row: the provider subject or the email. */
export function subjectOf(events: Record<string, EventBody>) {
  for (const body of Object.values(events)) {
    const s = body?.subject
    if (s?.subject_type === 'iss-sub' && typeof s.sub === 'string') return { subject: s.sub, email: null }
    if (s?.subject_type === 'email' && typeof s.email === 'string') return { subject: null, email: s.email.toLowerCase() }
  }
  return { subject: null, email: null }
}

interface Target {
  userIds: string[]
  accountIds: string[]
}

/** Users and Google account links an event's subject names: by provider subject (same issuer) or by email. */
async function findTarget(db: Db, subject: Subject | undefined, issuer: string): Promise<Target> {
  let rows: Array<{ id: string; userId: string }> = []
  let userIds: string[] = []
  if (subject?.subject_type === 'iss-sub' && typeof subject.sub === 'string' && typeof subject.iss === 'string' && sameIssuer(subject.iss, issuer)) {
    rows = await db
      .select({ id: accounts.id, userId: accounts.userId })
      .from(accounts)
      .where(and(eq(accounts.provider, 'google'), eq(accounts.providerAccountId, subject.sub)))
  } else if (subject?.subject_type === 'email' && typeof subject.email === 'string') {
    const email = subject.email.toLowerCase()
    userIds = (await db.select({ id: users.id }).from(users).where(eq(users.email, email))).map((u) => u.id)
    const byUser = userIds.length ? inArray(accounts.userId, userIds) : undefined
    rows = await db
      .select({ id: accounts.id, userId: accounts.userId })
      .from(accounts)
      .where(and(eq(accounts.provider, 'google'), or(eq(accounts.email, email), byUser)))
  }
  return { userIds: [...new Set([...userIds, ...rows.map((r) => r.userId)])], accountIds: rows.map((r) => r.id) }
}

/** Ends the users' sessions (noting which, so what they opened closes after the commit); answers how many. */
async function endSessions(db: Db, userIds: string[], ended: EndedSession[]) {
  if (!userIds.length) return 0
  const gone = await deleteSessions(db, { userIds })
  ended.push(...gone)
  return gone.length
}

async function updateAccounts(db: Db, accountIds: string[], set: Partial<typeof accounts.$inferInsert>) {
  if (!accountIds.length) return 0
  return (await db.update(accounts).set(set).where(inArray(accounts.id, accountIds)).returning({ id: accounts.id })).length
}

/** Acts on one event; returns what was done, for the event row's `outcome`. */
async function apply(db: Db, type: string, body: EventBody, t: Target, ended: EndedSession[]): Promise<string> {
  const name = type.startsWith(RISC_EVENT) ? type.slice(RISC_EVENT.length) : type
  const needsTarget = ['sessions-revoked', 'tokens-revoked', 'account-disabled', 'account-enabled'].includes(name)
  if (needsTarget && !t.userIds.length) return `${name}: no matching user`
  switch (name) {
    case 'sessions-revoked':
      return `${name}: ${await endSessions(db, t.userIds, ended)} session(s) deleted`
    case 'tokens-revoked':
      return `${name}: tokens dropped on ${await updateAccounts(db, t.accountIds, { accessToken: null, refreshToken: null, expiresAt: null })} account(s)`
    case 'account-disabled': {
      const reason = typeof body.reason === 'string' ? body.reason : 'unspecified'
      // Hijacking: whoever holds a session may be the attacker. Other reasons (bulk-account) only stop Google sign-in.
      const deleted = reason === 'hijacking' ? `${await endSessions(db, t.userIds, ended)} session(s) deleted, ` : ''
      return `${name} (${reason}): ${deleted}sign-in disabled on ${await updateAccounts(db, t.accountIds, { signInDisabled: true })} account(s)`
    }
    case 'account-enabled':
      return `${name}: sign-in enabled on ${await updateAccounts(db, t.accountIds, { signInDisabled: false })} account(s)`
    case 'account-credential-change-required':
    case 'verification':
      return `${name}: no action`
    default:
      return `${name}: ignored`
  }
}

/**
 * Processes a stored event once: claims the row (processedAt), acts on every event it carries, records the
 * outcome. A failure releases the claim so the queue's retry runs it again.
 */
export async function processSecurityEvent(db: Db, jti: string, issuer: string) {
  // Events name users by Google subject or email: every step is the listed `riscEvents` cross-user access.
  const [event] = await asService(db, 'riscEvents', (tx) =>
    tx
      .update(securityEvents)
      .set({ processedAt: new Date() })
      .where(and(eq(securityEvents.jti, jti), isNull(securityEvents.processedAt)))
      .returning(),
  )
  if (!event) return { processed: false as const, users: [] as string[], ended: [] as EndedSession[] }
  try {
    // The actions and their outcome commit together: a failure leaves no half-applied event behind.
    const outcome = await asService(db, 'riscEvents', async (tx) => {
      const events = ((event.payload as { events?: Record<string, EventBody> }).events ?? {}) as Record<string, EventBody>
      const outcomes: string[] = []
      let userId: string | null = null
      const touched = new Set<string>()
      const ended: EndedSession[] = []
      for (const [type, body] of Object.entries(events)) {
        const target = await findTarget(tx, body?.subject, issuer)
        userId ??= target.userIds[0] ?? null
        for (const id of target.userIds) touched.add(id)
        outcomes.push(await apply(tx, type, body ?? {}, target, ended))
      }
      const outcome = outcomes.join('; ') || 'no events'
      await tx.update(securityEvents).set({ outcome, userId }).where(eq(securityEvents.jti, jti))
      return { outcome, users: [...touched], ended }
    })
    return { processed: true as const, ...outcome }
  } catch (e) {
    await asService(db, 'riscEvents', (tx) => tx.update(securityEvents).set({ processedAt: null }).where(eq(securityEvents.jti, jti)))
    throw e
  }
}
