import { and, eq, gt, inArray, isNull, lte, or } from 'drizzle-orm'
import type { Db } from '../../lib/db/rls'
import { withUser } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { agentNotFound } from '../../lib/agents/access'
import { agents, chatJobs, type ChatJob } from '../../schema'
import { type ClaimedResult, JOB_FINISHED, type JobStatus, jobNotFound, LEASE_EXPIRED, LEASE_NOT_HELD, UNFINISHED } from './jobs'

/**
 * Claims `jobId` for the caller's agent `claimerAgentId` under a new lease of `leaseSec` from `now`. One
 * conditional UPDATE decides the one winner: it matches only an unfinished job with no claim or an expired one,
 * and a concurrent claim waits for the row's lock, then no longer matches (the winner's lease runs past `now`).
 * The same holds across an expiry: of the claims that find the lease run out, one takes it.
 */
export function claimJob(db: Db, userId: string, jobId: string, claimerAgentId: string, leaseSec: number, now = new Date()): Promise<ChatJob> {
  return withUser(db, userId, async (tx) => {
    const [job] = await tx.select({ id: chatJobs.id }).from(chatJobs).where(eq(chatJobs.id, jobId))
    if (!job) throw jobNotFound()
    const [agent] = await tx.select({ id: agents.id }).from(agents).where(and(eq(agents.id, claimerAgentId), eq(agents.userId, userId)))
    if (!agent) throw agentNotFound()
    const free = or(isNull(chatJobs.claimedByAgentId), isNull(chatJobs.leaseExpiresAt), lte(chatJobs.leaseExpiresAt, now))
    const [won] = await tx
      .update(chatJobs)
      .set({
        status: 'running',
        claimedByAgentId: agent.id,
        claimedAt: now,
        leaseId: crypto.randomUUID(),
        leaseExpiresAt: new Date(now.getTime() + leaseSec * 1000),
        updatedAt: now,
      })
      .where(and(eq(chatJobs.id, jobId), inArray(chatJobs.status, UNFINISHED), free))
      .returning()
    if (won) return won
    const [current] = await tx.select({ status: chatJobs.status }).from(chatJobs).where(eq(chatJobs.id, jobId))
    if (current && UNFINISHED.includes(current.status as JobStatus)) throw new ApiError('ALREADY_CLAIMED')
    throw new ApiError('INVALID_TRANSITION', JOB_FINISHED)
  })
}

export type ClaimOutcome = { status: 'succeeded'; result: ClaimedResult; error: null } | { status: 'failed'; error: string }

/**
 * The lease holder's end of a claimed job: `outcome` is stored only while `leaseId` is the job's current lease
 * and has not run out at `now`, and only once (the UPDATE matches an unfinished job alone, so of a complete and a
 * fail, or two completes, one wins; a re-claim after the expiry has replaced the lease, so the old holder no longer
 * matches). The lease is cleared; the claimer stays as who finished it. When nothing matched, a second read says
 * why: another user's or no job (404), finished (409 `INVALID_TRANSITION`), or the lease ran out or is not this
 * one (409 `LEASE_LOST`).
 */
export function settleClaimedJob(db: Db, userId: string, jobId: string, leaseId: string, outcome: ClaimOutcome, now = new Date()): Promise<ChatJob> {
  return withUser(db, userId, async (tx) => {
    const [done] = await tx
      .update(chatJobs)
      .set({ ...outcome, leaseId: null, leaseExpiresAt: null, updatedAt: now })
      .where(and(eq(chatJobs.id, jobId), eq(chatJobs.leaseId, leaseId), gt(chatJobs.leaseExpiresAt, now), inArray(chatJobs.status, UNFINISHED)))
      .returning()
    if (done) return done
    const [job] = await tx.select().from(chatJobs).where(eq(chatJobs.id, jobId))
    if (!job) throw jobNotFound()
    if (!UNFINISHED.includes(job.status as JobStatus)) throw new ApiError('INVALID_TRANSITION', JOB_FINISHED)
    throw new ApiError('LEASE_LOST', job.leaseId === leaseId ? LEASE_EXPIRED : LEASE_NOT_HELD)
  })
}
