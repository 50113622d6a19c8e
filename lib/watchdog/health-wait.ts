import type { Services } from '../context'
import { errorFields, log } from '../log'

/**
 * The health wait (spec "Limits": poll every 2 s, 60 s overall): after a provisioning or a lifecycle action leaves an
 * agent `starting`, a queued job probes its runtime at once and then every 2 s, until it answers (the agent is then
 * recorded `running`) or 60 s have passed (the watchdog takes over, as before). The receiver is
 * functions/cron/health-wait.ts; QStash delays the re-probes on Workers, the in-process queue locally.
 */
export const HEALTH_WAIT_PATH = '/api/cron/health-wait'
export const HEALTH_WAIT_POLL_SEC = 2
export const HEALTH_WAIT_TIMEOUT_MS = 60_000

/** One probe's job: the agent, the start it waits for (a later start makes it stale), and when the wait ends. */
export interface HealthWaitMessage {
  agentId: string
  /** The agent's `startedAt` (ISO 8601) when the wait began: a newer start or a stop ends this wait. */
  startedAt: string
  /** Epoch ms after which no more probe is queued. */
  until: number
}

/**
 * Queues the first probe of `agent`'s health wait (no delay). Best effort: a queue that refuses (or none configured)
 * is logged and the action still succeeds (the watchdog finds the agent on its next sweep).
 */
export async function queueHealthWait(services: Pick<Services, 'queue'>, agent: { id: string; startedAt: Date | null }, now = Date.now()) {
  if (!agent.startedAt) return
  const message: HealthWaitMessage = { agentId: agent.id, startedAt: agent.startedAt.toISOString(), until: now + HEALTH_WAIT_TIMEOUT_MS }
  try {
    await services.queue.publish(HEALTH_WAIT_PATH, message, { retries: 1 })
  } catch (e) {
    log.warn('agent.health_wait_unqueued', { agentId: agent.id, ...errorFields(e) })
  }
}
