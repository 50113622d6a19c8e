import { and, eq } from 'drizzle-orm'
import { forgetProbe } from '../../lib/agents/instance'
import { asService } from '../../lib/db/rls'
import { errorFields, log } from '../../lib/log'
import { checkRuntime } from '../../lib/runtime/probe'
import { HEALTH_WAIT_PATH, HEALTH_WAIT_POLL_SEC, type HealthWaitMessage } from '../../lib/watchdog/health-wait'
import type { WatchdogDeps } from '../../lib/watchdog/deps'
import { ALIVE } from '../../lib/watchdog/rules'
import { agentEvents, agents } from '../../schema'

export type HealthWaitOutcome = 'running' | 'waiting' | 'timed-out' | 'stale'

/**
 * One probe of an agent's health wait (lib/watchdog/health-wait.ts). The wait is `stale` (nothing done) once the
 * agent is gone, no longer `starting`, or started again since (its `startedAt` moved: that start has its own wait).
 * A runtime that answers (`running`, `healthy` or `setup`, as the watchdog counts it, by the same check) makes the agent `running`, with
 * the transition, in one conditional update (the watchdog doing the same meanwhile records it once). Otherwise the
 * next probe is queued 2 s later, unless that is past the wait's end (`timed-out`: the watchdog takes over).
 */
export async function healthWait(deps: Pick<WatchdogDeps, 'db' | 'kv' | 'queue' | 'now'>, msg: HealthWaitMessage): Promise<HealthWaitOutcome> {
  const startedAt = new Date(msg.startedAt)
  const current = (a: { status: string; startedAt: Date | null } | undefined) => a?.status === 'starting' && a.startedAt?.getTime() === startedAt.getTime()
  const [agent] = await asService(deps.db, 'watchdog', (tx) =>
    tx.select({ id: agents.id, userId: agents.userId, status: agents.status, startedAt: agents.startedAt, runtimeUrl: agents.runtimeUrl }).from(agents).where(eq(agents.id, msg.agentId)),
  )
  if (!current(agent)) return 'stale'
  const probe = agent.runtimeUrl ? await checkRuntime(agent.runtimeUrl) : null
  if (probe && ALIVE.has(probe.status)) {
    const at = new Date(deps.now())
    const moved = await asService(deps.db, 'watchdog', async (tx) => {
      const rows = await tx
        .update(agents)
        .set({ status: 'running', statusReason: null, lastSeenAt: at, updatedAt: at })
        .where(and(eq(agents.id, agent.id), eq(agents.status, 'starting'), eq(agents.startedAt, startedAt)))
        .returning({ id: agents.id })
      if (rows.length) {
        await tx.insert(agentEvents).values({ agentId: agent.id, userId: agent.userId, kind: 'status', fromState: 'starting', toState: 'running', reason: 'The runtime answers its probes', at })
      }
      return rows.length > 0
    })
    if (!moved) return 'stale'
    // The instance's cached probe may still say `starting`: the next read probes afresh.
    await forgetProbe(deps, agent.id).catch((e) => log.warn('agent.probe_cache_failed', { agentId: agent.id, ...errorFields(e) }))
    log.info('agent.running', { agentId: agent.id, waitedMs: deps.now() - startedAt.getTime() })
    return 'running'
  }
  if (deps.now() + HEALTH_WAIT_POLL_SEC * 1000 > msg.until) {
    log.info('agent.health_wait_timed_out', { agentId: agent.id, status: probe?.status ?? 'no-url' })
    return 'timed-out'
  }
  await deps.queue.publish(HEALTH_WAIT_PATH, msg, { delaySec: HEALTH_WAIT_POLL_SEC, retries: 1 })
  return 'waiting'
}
