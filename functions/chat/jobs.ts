import type { ChatJob } from '../../schema'
import type { Services } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { releaseTicket, type Ticket } from './workload'

/** Where the queue delivers chat jobs (`POST`, signed). */
export const CHAT_QUEUE_PATH = '/api/queue/chat'
/** Redeliveries after the first: four deliveries in all, the last of which marks the job failed if it fails too. */
export const CHAT_RETRIES = 3
/** The runtime session every dashboard chat goes to: the conversation continues from one message to the next. */
export const CHAT_SESSION_ID = 'dashboard'

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const
export type JobStatus = (typeof JOB_STATUSES)[number]
/** Statuses a job can still leave: only these are delivered or claimed (`succeeded` and `failed` are final). */
export const UNFINISHED: JobStatus[] = ['queued', 'running']

/** What the runtime answered, as the job keeps it. */
export interface ChatResult {
  sessionId: string
  reply: string
}

/** What a claimer's `complete` stores: its reply, and the session it names (null when none). */
export interface ClaimedResult {
  sessionId: string | null
  reply: string
}

/**
 * A claim whose lease has run out (or a claim older than leases, which has none): the job is back in the queue,
 * read as `queued` and claimable again. Only an unfinished job has a lease; `now` is the injected clock.
 */
export const leaseExpired = (job: Pick<ChatJob, 'status' | 'claimedByAgentId' | 'leaseExpiresAt'>, now: Date) =>
  UNFINISHED.includes(job.status as JobStatus) && job.claimedByAgentId !== null && (job.leaseExpiresAt === null || job.leaseExpiresAt <= now)

/**
 * A job as `GET /api/jobs/:jobId` answers it. The lease is judged at read time: a job whose lease ran out reads as
 * `queued` with no claimer, as it is for the next claim (no sweeper rewrites the row).
 */
export const jobView = (job: ChatJob, now = new Date()) => {
  const back = leaseExpired(job, now)
  const live = !back && UNFINISHED.includes(job.status as JobStatus) && job.leaseExpiresAt !== null
  return {
    jobId: job.id,
    status: (back ? 'queued' : job.status) as JobStatus,
    attempts: job.attempts,
    result: (job.result as ChatResult | ClaimedResult | null) ?? null,
    error: job.error,
    claimedByAgentId: back ? null : job.claimedByAgentId,
    leaseExpiresAt: live ? job.leaseExpiresAt!.toISOString() : null,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
  }
}

/** The lease's refusals for `complete` and `fail`, worded once. */
export const LEASE_EXPIRED = 'Lease expired: claim the job again'
export const LEASE_NOT_HELD = 'Lease not held: the job is not claimed under this lease'
export const JOB_FINISHED = 'Job already finished'

/** Another user's job is invisible under RLS: the same 404 as one that does not exist. */
export const jobNotFound = () => new ApiError('NOT_FOUND', 'Job not found')

/** The workload ticket a job holds. */
export const ticketOf = (job: Pick<ChatJob, 'id' | 'userId' | 'weight'>): Ticket => ({ userId: job.userId, jobId: job.id, weight: job.weight })

/**
 * Gives a job's workload slots back once it ended (or was claimed). Best effort: when the kv store fails, the
 * ticket still expires after `CHAT_TICKET_TTL_SEC`, so the failure is logged and the caller goes on.
 */
export async function releaseJobTicket(services: Pick<Services, 'kv' | 'config'>, job: Pick<ChatJob, 'id' | 'userId' | 'weight'>) {
  try {
    await releaseTicket(services.kv, services.config, ticketOf(job))
  } catch (e) {
    log.warn('chat.ticket_release_failed', { jobId: job.id, ...errorFields(e) })
  }
}
