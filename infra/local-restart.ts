import { and, eq, inArray } from 'drizzle-orm'
import { recordStatus } from '../lib/agents/provision'
import type { Services } from '../lib/context'
import { asService } from '../lib/db/rls'
import { errorFields, log } from '../lib/log'
import { agents, type Agent } from '../schema'

/** Statuses that say a runtime process is (or is about to be) up. */
const LIVE = ['starting', 'running']

export const RESTART_STOPPED_REASON = 'The server restarted and the local runtime process ended with it: start the agent again'
export const RESTART_INTERRUPTED_REASON =
  'The server restarted while the local runtime was being created: delete the agent and provision it again'

export interface LocalRestartResult {
  /** Recorded `stopped`: they were `starting` or `running`, and nothing answers at their address. */
  stopped: number
  /** Recorded `error`: their creation was cut off by the restart. */
  interrupted: number
  /** Left as they were: something still answers at their address (another server's process on a shared database). */
  answering: number
}

/**
 * What a start of the local server does to agents on local runtimes (`runtime_provider = 'local'`): their processes
 * are children of the server and end with it (infra/local-runtime-provider.ts), so after a restart none of them runs,
 * whatever the records say. Each `starting` or `running` one whose address no longer answers is recorded `stopped`
 * with the reason (an `agent_events` row, as every status change): it reads as what it is, the watchdog leaves it
 * alone, and its owner starts it again (`POST /api/agents/{id}/start`) when they want it. Agents are not restarted on
 * their own: a restart of the server must not cost memory and CPU for agents nobody asked for. One still
 * `provisioning` (the creation was cut off) is recorded `error` with the reason.
 */
export async function reconcileLocalAgents(services: Pick<Services, 'db'>, opts: { probeTimeoutMs?: number } = {}): Promise<LocalRestartResult> {
  const result: LocalRestartResult = { stopped: 0, interrupted: 0, answering: 0 }
  const found = await asService(services.db, 'localRestart', (tx) =>
    tx
      .select()
      .from(agents)
      .where(and(eq(agents.runtimeProvider, 'local'), inArray(agents.status, [...LIVE, 'provisioning']))),
  )
  for (const agent of found) {
    try {
      if (agent.status === 'provisioning') {
        await recordStatus(services, agent, 'error', RESTART_INTERRUPTED_REASON)
        result.interrupted++
      } else if (await answers(agent, opts.probeTimeoutMs ?? 1000)) {
        result.answering++
      } else {
        await recordStatus(services, agent, 'stopped', RESTART_STOPPED_REASON)
        result.stopped++
      }
    } catch (e) {
      // Deleted meanwhile, or the write failed: the next start tries again; this one goes on.
      log.warn('local_restart.record_failed', { agentId: agent.id, ...errorFields(e) })
    }
  }
  if (found.length) log.info('local_restart.reconciled', { ...result })
  return result
}

/** Whether a runtime answers its liveness probe at the agent's recorded address. */
async function answers(agent: Agent, timeoutMs: number) {
  if (!agent.runtimeUrl) return false
  try {
    const res = await fetch(new URL('/healthz', agent.runtimeUrl), { signal: AbortSignal.timeout(timeoutMs) })
    await res.body?.cancel()
    return res.ok
  } catch {
    return false
  }
}
