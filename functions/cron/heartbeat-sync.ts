import { and, asc, gt, inArray, isNotNull } from 'drizzle-orm'
import type { Services } from '../../lib/context'
import { asService } from '../../lib/db/rls'
import { errorFields, log } from '../../lib/log'
import { continuationId, runOf } from './continuation'
import { agentGateway } from '../../lib/agents/access'
import { HEARTBEAT_JOB_ID, heartbeatFrequency } from '../../lib/runtime/provider'
import { agents, type Agent } from '../../schema'

/**
 * The heartbeat cron (`POST /api/cron/heartbeat`): the stored heartbeat setting is the owner's latest word
 * (`PUT /api/heartbeat` writes it whether or not the gateway took it), so each run puts it on every live agent's
 * gateway whose own job differs: a setting stored while the gateway was unreachable, or a runtime that lost its
 * job (a repair, a reset), is applied at the next run. The gateway runs the job itself; the platform never sends
 * heartbeats on its behalf, so nothing is delivered twice. One page per delivery, a `{cursor}` continuation after it.
 */
export const HEARTBEAT_PATH = '/api/cron/heartbeat'
export const HEARTBEAT_CRON = '*/15 * * * *'
/** The cron's period: a sync's run (functions/cron/continuation.ts) is the period it started in. */
const HEARTBEAT_PERIOD_MS = 15 * 60_000
export const HEARTBEAT_PAGE = 200
// Gateway calls in flight at once within a page.
const CONCURRENCY = 10

export interface HeartbeatSyncResult {
  checked: number
  updated: number
  unreachable: number
  more: boolean
}

async function reconcile(services: Services, agent: Agent): Promise<'same' | 'updated' | 'unreachable'> {
  try {
    const gateway = await agentGateway(services, agent)
    const job = (await gateway.cronJobs()).find((j) => j.id === HEARTBEAT_JOB_ID)
    const wanted = { enabled: agent.heartbeatEnabled, frequency: heartbeatFrequency(agent.heartbeatFrequency) }
    // No job and none wanted: nothing to do. A job that matches: nothing to do.
    if ((!job && !wanted.enabled) || (job && job.enabled === wanted.enabled && job.frequency === wanted.frequency)) return 'same'
    await gateway.setHeartbeat(wanted)
    log.info('heartbeat.synced', { agentId: agent.id, enabled: wanted.enabled, frequency: wanted.frequency })
    return 'updated'
  } catch (e) {
    log.warn('heartbeat.sync_unreachable', { agentId: agent.id, ...errorFields(e) })
    return 'unreachable'
  }
}

/**
 * One page of live agents after `cursor`, reconciled; publishes the next page when this one was full. `run` is the
 * sync's start (the cron delivery's period), carried by its continuations, which it deduplicates.
 */
export async function syncHeartbeats(services: Services, cursor?: string, run = runOf(Date.now(), HEARTBEAT_PERIOD_MS)): Promise<HeartbeatSyncResult> {
  const page = await asService(services.db, 'heartbeatSync', (tx) =>
    tx
      .select()
      .from(agents)
      .where(
        and(
          inArray(agents.status, ['running', 'starting']),
          isNotNull(agents.runtimeUrl),
          isNotNull(agents.gatewayToken),
          cursor ? gt(agents.id, cursor) : undefined,
        ),
      )
      .orderBy(asc(agents.id))
      .limit(HEARTBEAT_PAGE),
  )
  const outcomes: Array<'same' | 'updated' | 'unreachable'> = []
  for (let i = 0; i < page.length; i += CONCURRENCY) {
    outcomes.push(...(await Promise.all(page.slice(i, i + CONCURRENCY).map((a) => reconcile(services, a)))))
  }
  const more = page.length === HEARTBEAT_PAGE
  if (more) {
    const next = page[page.length - 1].id
    await services.queue.publish(HEARTBEAT_PATH, { cursor: next, run }, { retries: 3, deduplicationId: continuationId(HEARTBEAT_PATH, run, next) })
  }
  return {
    checked: page.length,
    updated: outcomes.filter((o) => o === 'updated').length,
    unreachable: outcomes.filter((o) => o === 'unreachable').length,
    more,
  }
}
