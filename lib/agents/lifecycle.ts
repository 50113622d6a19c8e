import { eq } from 'drizzle-orm'
import type { Services } from '../context'
import type { Db } from '../db/rls'
import { asService, withUser } from '../db/rls'
import { requirePaidAccess } from '../auth/plan'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import { queueFilesPurge } from '../files/purge'
import { queueHealthWait } from '../watchdog/health-wait'
import { markAgentFilesDeleting } from '../files/records'
import { RuntimeProviderError } from '../runtime/provider'
import { agents, type Agent } from '../../schema'
import { agentGateway, agentNotFound, isGatewayTokenUnreadable, newGatewayToken, openGatewayToken, runtimeTarget } from './access'
import { forgetProbe } from './instance'
import { recordStatus } from './provision'
import { resumeAgent, SUSPENDED, suspendedAgent } from './suspension'

/**
 * What the platform does to an agent's runtime, one function for the web routes (`POST /api/agents/:id/<action>`,
 * the owner's session) and the backend's shared-key routes: the provider call, then the agent's new status with its
 * transition (lib/agents/provision.ts `recordStatus`).
 *
 * | Action | Provider call | Status after |
 * |---|---|---|
 * | start | `start` | `starting` (`startedAt` now; the health wait's probe turns it `running`) |
 * | stop | `stop` | `stopped` |
 * | restart | `restart` | `starting` (`startedAt` now) |
 * | update | `updateImage(image ?? RUNTIME_IMAGE)` | `starting` (`image` stored) |
 * | repair | `repair` (`rekey` with a fresh token when the stored one cannot be opened) | `starting` (`startedAt` now) |
 * | reset-memory | the gateway's `resetMemory` | unchanged |
 * | factory-reset | the gateway's `resetMemory`, then `repair` | `starting` (`startedAt` now) |
 *
 * The instance's cached probe (lib/agents/instance.ts) is dropped before and after, so the next read probes afresh.
 * An action that leaves the agent `starting` queues its health wait (lib/watchdog/health-wait.ts): the runtime is
 * probed at once and every 2 s for up to 60 s, and recorded `running` as soon as it answers.
 *
 * The gateway token: `stop` does not need it (the provider finds the runtime by service id or name), so it works
 * whatever became of the server's keys. A `repair` of an agent whose sealed token this server cannot open (or that
 * has none) re-keys it: a fresh token is given to the runtime (the provider's `rekey`: the runtime redeployed with
 * it) and then stored sealed under the current key. Every other action needs the stored token: 409
 * `SECRET_UNREADABLE` (nothing done) when it cannot be opened.
 *
 * A provider failure is mapped: no such runtime → 404 `Runtime not found` (`NOT_FOUND`), a conflicting operation →
 * 409 (`CONFLICT`), anything else → 502 `Runtime provider unavailable` (`RUNTIME_UNAVAILABLE`). A failed
 * infrastructure call (not 409, not reset-memory) leaves the agent in status `error` with the reason, so the record
 * says what is known to exist.
 */
export const LIFECYCLE_ACTIONS = ['start', 'stop', 'restart', 'update', 'repair', 'reset-memory', 'factory-reset'] as const
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number]

/** The actions the backend's shared-key routes offer (spec "Authentication": backend per-agent lifecycle). */
export const BACKEND_LIFECYCLE_ACTIONS = ['start', 'stop', 'restart', 'repair'] as const satisfies readonly LifecycleAction[]

const STATUS_AFTER: Record<Exclude<LifecycleAction, 'reset-memory'>, 'starting' | 'stopped'> = {
  start: 'starting',
  stop: 'stopped',
  restart: 'starting',
  update: 'starting',
  repair: 'starting',
  'factory-reset': 'starting',
}

/** A provider failure as the API answers it. */
export function providerApiError(e: RuntimeProviderError): ApiError {
  if (e.status === 404) return new ApiError('NOT_FOUND', 'Runtime not found')
  if (e.status === 409) return new ApiError('CONFLICT', `Runtime operation refused: ${e.message}`)
  return new ApiError('RUNTIME_UNAVAILABLE')
}

/**
 * Actions that run or change a runtime: each needs the owner's paid access at the moment of use (402 `PLAN_REQUIRED`
 * otherwise, whoever asks: the owner's session, or the backend's shared key acting on the owner's agent). `stop`
 * takes nothing and stays open.
 */
export const PAID_ACTIONS: ReadonlySet<LifecycleAction> = new Set(['start', 'restart', 'update', 'repair', 'reset-memory', 'factory-reset'])

/**
 * Runs `action` on `agent`'s runtime and records the outcome; answers the agent as stored afterwards. First, before
 * any provider call: a template is refused (409); a paid action needs the owner's paid access (402); a suspended
 * agent can only be started, which resumes it under the owner's plan (lib/agents/suspension.ts; 429 when the plan is
 * full), while `stop` answers it as it is (its runtime was stopped when it was suspended) and anything else is 409.
 */
export async function runLifecycle(services: Services, agent: Agent, action: LifecycleAction, opts: { image?: string } = {}): Promise<Agent> {
  if (agent.status === 'template') throw new ApiError('INVALID_TRANSITION', 'A template agent has no runtime')
  const access = PAID_ACTIONS.has(action) ? await requirePaidAccess(services, agent.userId) : null
  if (agent.status === SUSPENDED) {
    if (action === 'stop') return agent
    if (action !== 'start' || !access) throw suspendedAgent()
    agent = await resumeAgent(services, agent, access.plan)
  }
  const { target, rekeyed } = await lifecycleTarget(services, agent, action)
  const { runtimes } = services
  await forgetProbe(services, agent.id)
  try {
    switch (action) {
      case 'start':
        await runtimes.start(target)
        break
      case 'stop':
        await runtimes.stop(target)
        break
      case 'restart':
        await runtimes.restart(target)
        break
      case 'update':
        await runtimes.updateImage(target, opts.image ?? services.config.RUNTIME_IMAGE)
        break
      case 'repair':
        if (rekeyed) await runtimes.rekey(target, rekeyed.token)
        else await runtimes.repair(target)
        break
      case 'reset-memory':
      case 'factory-reset':
        await (await agentGateway(services, agent)).resetMemory()
        if (action === 'factory-reset') await runtimes.repair(target)
        break
    }
  } catch (e) {
    if (!(e instanceof RuntimeProviderError)) throw e
    log.warn('agent.lifecycle_failed', { dependency: e.provider, agentId: agent.id, action, provider: e.provider, status: e.status, ...errorFields(e) })
    if (action !== 'reset-memory' && action !== 'factory-reset' && e.status !== 409) {
      const reason = e.status === 404 ? `${action} failed: runtime not found` : `${action} failed: ${e.message}`
      await recordStatus(services, agent, 'error', reason.slice(0, 500))
    }
    throw providerApiError(e)
  } finally {
    await forgetProbe(services, agent.id)
  }
  log.info('agent.lifecycle', { agentId: agent.id, action, ...(rekeyed ? { rekeyed: true } : {}) })
  if (action === 'reset-memory') return agent
  const status = STATUS_AFTER[action]
  const reason = action === 'stop' ? 'stopped by request' : rekeyed ? 'repaired with a new gateway token' : null
  const after = await recordStatus(services, agent, status, reason, {
    ...(status === 'starting' ? { startedAt: new Date() } : {}),
    // An `update` with no image named (instance maintenance) moves to the configured image, which is then the agent's.
    ...(action === 'update' ? { image: opts.image ?? services.config.RUNTIME_IMAGE } : {}),
    // Stored once the runtime has it: a failed re-key leaves the old (unreadable) token, and repair can be asked again.
    ...(rekeyed ? { gatewayToken: rekeyed.gatewayToken, gatewayTokenKeyId: rekeyed.gatewayTokenKeyId } : {}),
  })
  // Probed at once and every 2 s until it answers (lib/watchdog/health-wait.ts): `running` within seconds.
  if (status === 'starting') await queueHealthWait(services, after)
  return after
}

/**
 * What the provider is told for `action` (see the table above): no token for `stop`; for `repair`, the stored
 * token or, when it cannot be opened or there is none, a fresh one (`rekeyed`, not stored yet); else the stored
 * token, 409 `SECRET_UNREADABLE` when it cannot be opened.
 */
async function lifecycleTarget(services: Services, agent: Agent, action: LifecycleAction) {
  const { config } = services
  if (action === 'stop') return { target: await runtimeTarget(config, agent, { token: false }), rekeyed: null }
  if (action !== 'repair') return { target: await runtimeTarget(config, agent), rekeyed: null }
  const token = await openGatewayToken(config, agent).catch((e) => {
    if (isGatewayTokenUnreadable(e)) return null
    throw e
  })
  const rekeyed = token === null ? await newGatewayToken(config, agent.userId) : null
  const target = { ...(await runtimeTarget(config, agent, { token: false })), gatewayToken: token ?? rekeyed!.token }
  return { target, rekeyed }
}

/**
 * Deletes an agent: its runtime through the provider first (by service id or name: the token is not needed), then the
 * row (as the owner). A provider 404 (nothing to remove) still deletes the row; any other provider failure keeps the
 * row in status `error` with the reason and answers 502, so nothing runs that the platform has no record of.
 *
 * Files: in the transaction that deletes the row, under its lock (no upload can add a record for the agent
 * meanwhile), every record of the agent becomes `deleting`: hidden at once, still counted, and no longer the
 * agent's (`agentId` null). Their objects are deleted by the files family, which holds the storage client: a queued
 * job (`FILES_PURGE_PATH`) deletes each object, then its record and bytes, retried by the queue while storage
 * refuses; the user's next upload finishes them too. So bytes are given back only once their objects are gone.
 */
export async function deleteAgent(services: Services, agent: Agent): Promise<void> {
  if (agent.status !== 'template') {
    try {
      // By service id or name alone: a token this server cannot open never keeps an agent from going.
      await services.runtimes.delete(await runtimeTarget(services.config, agent, { token: false }))
    } catch (e) {
      if (!(e instanceof RuntimeProviderError)) throw e
      if (e.status !== 404) {
        log.warn('agent.delete_failed', { agentId: agent.id, provider: e.provider, status: e.status, ...errorFields(e) })
        await recordStatus(services, agent, 'error', `delete failed: ${e.message}`.slice(0, 500))
        throw new ApiError('RUNTIME_UNAVAILABLE')
      }
    }
  }
  const files = await deleteRowHidingFiles(services.db, agent)
  if (files) {
    // The records are hidden and counted whatever happens here: should the job not be queued, the next upload frees them.
    await queueFilesPurge(services.queue, agent.userId).catch((e) =>
      log.error('agent.files_purge_unqueued', { agentId: agent.id, userId: agent.userId, files, ...errorFields(e) }),
    )
  }
  log.info('agent.deleted', { agentId: agent.id, files })
}

/** Deletes the agent's row, locked first, and marks its file records `deleting` in the same transaction: how many. */
function deleteRowHidingFiles(db: Db, agent: Agent): Promise<number> {
  return withUser(db, agent.userId, async (tx) => {
    await tx.select({ id: agents.id }).from(agents).where(eq(agents.id, agent.id)).for('update')
    const files = await markAgentFilesDeleting(tx, agent.userId, agent.id)
    await tx.delete(agents).where(eq(agents.id, agent.id))
    return files
  })
}

/** Any user's agent by id (the backend's shared-key routes), or 404 `Agent not found`. */
export async function findAgentAsService(db: Db, agentId: string): Promise<Agent> {
  const [agent] = await asService(db, 'agentLifecycle', (tx) => tx.select().from(agents).where(eq(agents.id, agentId)).limit(1))
  if (!agent) throw agentNotFound()
  return agent
}

/** An agent as every route answers it: never the gateway token (sealed or open), never the runtime's image secrets. */
export function agentJson(a: Agent) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null)
  return {
    id: a.id,
    name: a.name,
    plan: a.plan,
    aiProvider: a.aiProvider,
    config: a.config,
    status: a.status,
    statusReason: a.statusReason,
    verification: a.verification === 'human_verified' ? ('human_verified' as const) : ('unverified' as const),
    runtimeServiceId: a.runtimeServiceId,
    url: a.runtimeUrl,
    provisionedAt: iso(a.provisionedAt),
    startedAt: iso(a.startedAt),
    lastSeenAt: iso(a.lastSeenAt),
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  }
}
export type AgentJson = ReturnType<typeof agentJson>
