import { and, desc, eq, ne } from 'drizzle-orm'
import type { Services } from '../context'
import type { Db } from '../db/rls'
import { withUser } from '../db/rls'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import { probeRuntime, type ProbeResult } from '../runtime/probe'
import { agents, type Agent } from '../../schema'

/**
 * A user's instance (spec "Instance and maintenance"; the instance id is the user id): the user's most recent
 * agent that is not a `template`. Home and link installations carry no URL in the platform's records, so they
 * cannot be probed and are not instances here.
 */
export async function findInstanceAgent(db: Db, userId: string): Promise<Agent | null> {
  const [agent] = await withUser(db, userId, (tx) =>
    tx
      .select()
      .from(agents)
      .where(and(eq(agents.userId, userId), ne(agents.status, 'template')))
      .orderBy(desc(agents.createdAt), desc(agents.id))
      .limit(1),
  )
  return agent ?? null
}

export const noInstance = () => new ApiError('NOT_FOUND', 'No instance found. Please deploy first.')

/** How long a probe answer other than `unreachable` is reused for one instance. */
export const INSTANCE_PROBE_TTL_MS = 10_000
export const probeKey = (agentId: string) => `instance-probe:${agentId}`

/**
 * The runtime's probed state, reused from kv for `INSTANCE_PROBE_TTL_MS` unless it was `unreachable` (never
 * cached: the next read probes again). An agent without a URL yet is not probed: its stored status decides.
 * A runtime that answers nothing while the agent is stored as `stopped` (stopped by its owner) reads `stopped`.
 */
export type InstanceProbe = ProbeResult & {
  /** When this answer was probed (ISO 8601): a cached answer keeps its time. */
  probedAt: string
}

export async function probeInstance(services: Pick<Services, 'kv' | 'db'>, agent: Agent): Promise<InstanceProbe> {
  if (!agent.runtimeUrl) {
    const starting = agent.status === 'provisioning' || agent.status === 'starting'
    return {
      status: starting ? 'starting' : agent.status === 'stopped' ? 'stopped' : 'unknown',
      statusReason: agent.statusReason ?? (starting ? 'Runtime is being provisioned' : 'Runtime has no URL'),
      probeChecks: [],
      runtimeVersion: null,
      ffmpegAvailable: false,
      ffmpegVersion: null,
      uptime: null,
      startedAt: null,
      probedAt: new Date().toISOString(),
    }
  }
  const key = probeKey(agent.id)
  const cached = await services.kv.get<InstanceProbe>(key)
  if (cached) return cached
  const result: InstanceProbe = { ...(await probeRuntime(agent.runtimeUrl)), probedAt: new Date().toISOString() }
  if (result.status === 'unreachable') {
    if (agent.status === 'stopped') return { ...result, status: 'stopped', statusReason: agent.statusReason ?? 'Stopped by its owner' }
    return result
  }
  await services.kv.set(key, result, { ttlMs: INSTANCE_PROBE_TTL_MS })
  // It answered: remember when it was last seen (best effort; a failed write does not fail the read).
  await withUser(services.db, agent.userId, (tx) => tx.update(agents).set({ lastSeenAt: new Date() }).where(eq(agents.id, agent.id))).catch((e) =>
    log.warn('instance.last_seen_failed', { agentId: agent.id, ...errorFields(e) }),
  )
  return result
}

/** Drops the cached probe answer: after a lifecycle call the next read probes again. */
export const forgetProbe = (services: Pick<Services, 'kv'>, agentId: string) => services.kv.del(probeKey(agentId))
