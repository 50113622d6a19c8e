import { and, desc, eq, ne } from 'drizzle-orm'
import type { Services } from '../context'
import type { Db } from '../db/client'
import { withUser } from '../db/rls'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import { probeRuntime, type ProbeResult } from '../runtime/probe'
import { RuntimeProviderError, type RuntimeGateway } from '../runtime/provider'
import { agents, type Agent } from '../../schema'
import { runtimeTarget } from './access'
import { recordStatus } from './provision'

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

export const noInstance = () => new ApiError(404, 'No instance found. Please deploy first.', { code: 'NOT_FOUND' })

/** How long a probe answer other than `unreachable` is reused for one instance. */
export const INSTANCE_PROBE_TTL_MS = 10_000
const probeKey = (agentId: string) => `instance-probe:${agentId}`

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

/** A provider or runtime failure as the platform answers it. */
export function providerFailure(e: unknown): unknown {
  if (!(e instanceof RuntimeProviderError)) return e
  if (e.status === 404) return new ApiError(404, 'Runtime not found', { code: 'NOT_FOUND' })
  if (e.status === 409) return new ApiError(409, 'Runtime is busy; try again', { code: 'CONFLICT' })
  return new ApiError(502, 'Runtime provider unavailable', { code: 'PROVIDER_UNAVAILABLE' })
}

/** The agent's runtime gateway API (`RuntimeProviderError` when it has none: no URL, no token). */
export async function agentGateway(services: Pick<Services, 'config' | 'runtimes'>, agent: Agent): Promise<RuntimeGateway> {
  return services.runtimes.gateway(await runtimeTarget(services.config, agent))
}

/**
 * Lifecycle actions on an existing agent's runtime, one way for every route (instance and maintenance):
 * | Action | Through | Recorded status |
 * |---|---|---|
 * | start | provider start | `starting` (startedAt now) |
 * | stop | provider stop | `stopped` |
 * | restart | provider restart | `starting` |
 * | repair | provider repair (redeploy from the current image and configuration) | `starting` |
 * | update | provider image update to `RUNTIME_IMAGE` | `starting` |
 * | reset-memory | the runtime's gateway (memories cleared) | unchanged |
 * | factory-reset | reset-memory, then repair | `starting` |
 * A failing provider call records status `error` with the reason and answers 502 (404 when the provider has no
 * such runtime); a failing memory reset changes no status.
 */
export const LIFECYCLE_ACTIONS = ['start', 'stop', 'restart', 'repair', 'update', 'reset-memory', 'factory-reset'] as const
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number]

export async function runLifecycle(services: Services, agent: Agent, action: LifecycleAction): Promise<Agent> {
  const { runtimes, config } = services
  const target = await runtimeTarget(config, agent)
  await forgetProbe(services, agent.id)
  if (action === 'reset-memory' || action === 'factory-reset') {
    try {
      await runtimes.gateway(target).resetMemory()
    } catch (e) {
      log.warn('instance.reset_memory_failed', { agentId: agent.id, ...errorFields(e) })
      throw providerFailure(e)
    }
    if (action === 'reset-memory') return agent
  }
  try {
    if (action === 'start') await runtimes.start(target)
    else if (action === 'stop') await runtimes.stop(target)
    else if (action === 'restart') await runtimes.restart(target)
    else if (action === 'update') await runtimes.updateImage(target, config.RUNTIME_IMAGE)
    else await runtimes.repair(target)
  } catch (e) {
    log.error('instance.lifecycle_failed', { agentId: agent.id, action, provider: runtimes.kind, ...errorFields(e) })
    const reason = e instanceof RuntimeProviderError ? `${action} failed: ${e.message}` : `${action} failed`
    await recordStatus(services, agent, 'error', reason).catch((err) => log.error('agent.record_failed', { agentId: agent.id, ...errorFields(err) }))
    throw providerFailure(e)
  } finally {
    await forgetProbe(services, agent.id)
  }
  if (action === 'stop') return recordStatus(services, agent, 'stopped', 'Stopped by its owner')
  const changes = action === 'update' ? { image: config.RUNTIME_IMAGE } : action === 'start' ? { startedAt: new Date() } : {}
  return recordStatus(services, agent, 'starting', null, action === 'restart' || action === 'repair' || action === 'factory-reset' ? { startedAt: new Date() } : changes)
}
