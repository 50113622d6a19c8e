import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import { agentGateway, isGatewayTokenUnreadable } from '../../lib/agents/access'
import { SUSPENDED } from '../../lib/agents/suspension'
import type { Services } from '../../lib/context'
import { asService } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { RuntimeProviderError } from '../../lib/runtime/provider'
import { agents, chatJobs, type Agent, type ChatJob } from '../../schema'
import { CHAT_RETRIES, CHAT_SESSION_ID, type ChatResult, type JobStatus, releaseJobTicket, UNFINISHED } from './jobs'

export interface DeliveryOutcome {
  jobId: string
  /** The job's status after this delivery; null when the job no longer exists. */
  status: JobStatus | null
  /** Whether this delivery called the runtime. */
  delivered: boolean
}

type DeliveryServices = Pick<Services, 'db' | 'kv' | 'config' | 'runtimes'>

/**
 * One queue delivery of a chat job (`POST /api/queue/chat`), `retried` being the queue's `Upstash-Retried`.
 * A job that is gone, finished or claimed by an agent is left alone (a redelivery changes nothing). Otherwise it is
 * `running` with one more attempt, its text goes to its agent's runtime gateway with the job id as the delivery
 * id (the runtime answers a repeated one without handling it twice), and the reply is stored: `succeeded`, ticket
 * released. A failure before the last delivery puts it back to `queued` with the error and throws 502 so the
 * queue retries; at the last (or when the agent has no runtime gateway at all) it is `failed`, ticket released.
 */
export async function deliverChatJob(services: DeliveryServices, jobId: string, retried: number): Promise<DeliveryOutcome> {
  const { job, agent, running } = await start(services, jobId)
  if (!job || !running) return { jobId, status: (job?.status as JobStatus | undefined) ?? null, delivered: false }
  if (!agent) {
    // The agent's deletion removes its jobs too: only a race with it lands here.
    await finish(services, job, { status: 'failed', error: 'Agent not found' })
    return { jobId, status: 'failed', delivered: false }
  }
  if (agent.status === SUSPENDED) {
    // Suspended since the job was queued (its owner's paid access ended): its runtime is stopped, nothing to retry.
    await finish(services, job, { status: 'failed', error: 'Agent suspended' })
    return { jobId, status: 'failed', delivered: false }
  }
  const fields = { jobId, agentId: agent.id, attempt: job.attempts, retried }
  let result: ChatResult
  try {
    const gateway = await agentGateway(services, agent)
    result = await gateway.chat({ text: job.message, sessionId: CHAT_SESSION_ID, deliveryId: job.id })
  } catch (e) {
    const unreadable = isGatewayTokenUnreadable(e)
    const error = e instanceof RuntimeProviderError || unreadable ? e.message : 'Chat delivery failed'
    // No gateway at all (no URL or token), or a token this server cannot open, is not something a retry mends.
    const last = retried >= CHAT_RETRIES || unreadable || (e instanceof RuntimeProviderError && e.status === 404)
    if (last) {
      log.error('chat.delivery_failed', { ...fields, error, ...errorFields(e) })
      await finish(services, job, { status: 'failed', error })
      return { jobId, status: 'failed', delivered: true }
    }
    log.warn('chat.delivery_retry', { ...fields, error, ...errorFields(e) })
    // A job claimed meanwhile is its claimer's: it stays `running` under the lease.
    await asService(services.db, 'chatDelivery', (tx) =>
      tx.update(chatJobs).set({ status: 'queued', error, updatedAt: new Date() }).where(and(eq(chatJobs.id, jobId), eq(chatJobs.status, 'running'), isNull(chatJobs.claimedByAgentId))),
    )
    throw new ApiError('RUNTIME_UNAVAILABLE', 'Runtime unavailable')
  }
  await finish(services, job, { status: 'succeeded', result, error: null })
  log.info('chat.delivered', fields)
  return { jobId, status: 'succeeded', delivered: true }
}

/** Marks the job running (one more attempt) unless it is gone, finished or claimed; reads its agent. */
function start(services: DeliveryServices, jobId: string): Promise<{ job?: ChatJob; agent?: Agent; running: boolean }> {
  return asService(services.db, 'chatDelivery', async (tx) => {
    const [job] = await tx
      .update(chatJobs)
      .set({ status: 'running', attempts: sql`${chatJobs.attempts} + 1`, updatedAt: new Date() })
      .where(and(eq(chatJobs.id, jobId), inArray(chatJobs.status, UNFINISHED), isNull(chatJobs.claimedByAgentId)))
      .returning()
    if (!job) {
      const [left] = await tx.select().from(chatJobs).where(eq(chatJobs.id, jobId))
      return { job: left, running: false }
    }
    const [agent] = await tx.select().from(agents).where(eq(agents.id, job.agentId))
    return { job, agent, running: true }
  })
}

/** The job's outcome, stored unless it finished meanwhile; then its ticket is given back. */
async function finish(services: DeliveryServices, job: ChatJob, outcome: { status: 'succeeded'; result: ChatResult; error: null } | { status: 'failed'; error: string }) {
  await asService(services.db, 'chatDelivery', (tx) =>
    tx
      .update(chatJobs)
      .set({ ...outcome, updatedAt: new Date() })
      .where(and(eq(chatJobs.id, job.id), inArray(chatJobs.status, UNFINISHED))),
  )
  await releaseJobTicket(services, job)
}
