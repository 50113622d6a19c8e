import { count, eq, sql } from 'drizzle-orm'
import type { Services } from '../context'
import type { Db } from '../db/rls'
import { withUser } from '../db/rls'
import { ApiError } from '../http/errors'
import { errorFields, log } from '../log'
import type { Config } from '../config'
import { type AccessConfig, accessPlan, PLANS, type PlanName, type PlanRecord } from '../billing/plans'
import { RuntimeProviderError } from '../runtime/provider'
import { agentEvents, agents, type Agent } from '../../schema'
import { agentNotFound, newGatewayToken, runtimeName } from './access'
import { queueHealthWait } from '../watchdog/health-wait'

/** Agents a plan allows (spec "Plans": solo 1, collective 3, label 10, network unlimited). */
export const agentLimit = (plan: PlanName) => PLANS[plan].agents

/**
 * The switches checked before anything is created (`POST /api/provision`, backend `POST /api/deployments`): the kill
 * switch first (503, spec "Agents"), then `PROVISIONING_ENABLED` (spec backend health: "when provisioning is disabled,
 * provisioning-dependent operations return 500").
 */
export function assertProvisioningOpen(config: Pick<Config, 'PROVISIONING_ENABLED' | 'PROVISIONING_KILL_SWITCH'>) {
  if (config.PROVISIONING_KILL_SWITCH) {
    throw new ApiError('PROVISIONING_PAUSED', { headers: { 'Retry-After': '300' } })
  }
  if (!config.PROVISIONING_ENABLED) throw new ApiError('PROVISIONING_DISABLED')
}

/**
 * The plan a new agent is provisioned under: `accessPlan` (an admin's `network`, with no agent-count limit; a paid
 * plan's own; the trial's `solo`), else 403 `Active subscription required` (spec document 1 "Errors": provisioning
 * answers 403 where every other use answers 402).
 */
export function provisioningPlan(record: PlanRecord, config: AccessConfig, now = Date.now()): PlanName {
  const plan = accessPlan(record, config, now)
  if (!plan) throw new ApiError('SUBSCRIPTION_REQUIRED')
  return plan
}

/**
 * Takes the user's agent lock for the rest of the transaction: every change to how many agents a user has or
 * runs (a provisioning, the skills backing agent, resuming a suspended agent) takes it first, so the count it
 * then reads cannot be raced.
 */
export async function lockUserAgents(tx: Db, userId: string) {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`agents:${userId}`}))`)
}

/** 429 `AGENT_LIMIT` once `n` agents reach the plan's count (-1: unlimited). */
export function assertBelowAgentLimit(plan: PlanName, n: number) {
  const limit = agentLimit(plan)
  if (limit >= 0 && n >= limit) {
    throw new ApiError('AGENT_LIMIT', { message: `Agent limit reached for the ${plan} plan (${limit})`, extra: { limit, plan } })
  }
}

/**
 * Inside a transaction holding `lockUserAgents`: the user's agents a new one counts against, which is all of them
 * (suspended ones included: they come back when paid access returns).
 */
export async function countUserAgents(tx: Db, userId: string): Promise<number> {
  const [{ n }] = await tx.select({ n: count() }).from(agents).where(eq(agents.userId, userId))
  return n
}

/** A name for an agent provisioned without one: `agent-` and 6 hex characters. */
export const defaultAgentName = () =>
  `agent-${Array.from(crypto.getRandomValues(new Uint8Array(3)), (b) => b.toString(16).padStart(2, '0')).join('')}`

export interface ProvisionRequest {
  userId: string
  plan: PlanName
  name: string
  aiProvider?: string | null
  config?: Record<string, unknown>
  /** Admins provision past the plan's agent count. */
  bypassLimit?: boolean
}

/**
 * Provisions an agent: first its record (status `provisioning`), made in a transaction that takes a per-user lock
 * and counts the user's agents, so two concurrent creates at the limit cannot both pass (one wins, the other is
 * 429 `AGENT_LIMIT`); then the runtime, through the provider, outside any transaction. The record is updated with
 * what was created (`runtimeServiceId`, URL, `starting`) and its health wait is queued (probed every 2 s until it
 * answers, then `running`); if the provider fails, the record stays with status `error` and the reason, so nothing
 * exists that the platform has no record of.
 */
export async function provisionAgent(services: Services, req: ProvisionRequest): Promise<Agent> {
  const { db, config, runtimes } = services
  const sealed = await newGatewayToken(config, req.userId)
  const agent = await withUser(db, req.userId, async (tx) => {
    // One provisioning at a time per user: the count below cannot be raced.
    await lockUserAgents(tx, req.userId)
    if (!req.bypassLimit) assertBelowAgentLimit(req.plan, await countUserAgents(tx, req.userId))
    const [name] = await tx.select({ id: agents.id }).from(agents).where(sql`${agents.userId} = ${req.userId} and ${agents.name} = ${req.name}`)
    if (name) throw new ApiError('CONFLICT', 'An agent with this name already exists')
    const [row] = await tx
      .insert(agents)
      .values({
        userId: req.userId,
        name: req.name,
        plan: req.plan,
        aiProvider: req.aiProvider ?? null,
        config: req.config ?? {},
        status: 'provisioning',
        image: config.RUNTIME_IMAGE,
        runtimeProvider: runtimes.kind,
        gatewayTokenKeyId: sealed.gatewayTokenKeyId,
        gatewayToken: sealed.gatewayToken,
      })
      .returning()
    await tx.insert(agentEvents).values({ agentId: row.id, userId: req.userId, kind: 'status', toState: 'provisioning', reason: 'provision requested' })
    return row
  })

  let created: { serviceId: string; url: string } | undefined
  try {
    created = await runtimes.create({
      agentId: agent.id,
      userId: req.userId,
      name: runtimeName(agent.id),
      image: config.RUNTIME_IMAGE,
      plan: req.plan,
      env: { AGENT_NAME: req.name, AGENT_PLAN: req.plan },
      gatewayToken: sealed.token,
    })
    const started = await recordStatus(services, agent, 'starting', null, {
      runtimeServiceId: created.serviceId,
      runtimeUrl: created.url,
      provisionedAt: new Date(),
      startedAt: new Date(),
    })
    // Probed at once and every 2 s until it answers (lib/watchdog/health-wait.ts): `running` within seconds.
    await queueHealthWait(services, started)
    return started
  } catch (e) {
    const reason = e instanceof RuntimeProviderError ? `Runtime creation failed: ${e.message}` : 'Runtime creation failed'
    log.error('agent.provision_failed', { agentId: agent.id, provider: runtimes.kind, ...errorFields(e) })
    if (created) {
      // The runtime exists but its record could not be completed (or the agent was deleted meanwhile): remove it
      // rather than leave a runtime the platform has no record of.
      const target = { agentId: agent.id, name: runtimeName(agent.id), serviceId: created.serviceId, url: created.url, gatewayToken: null }
      await runtimes.delete(target).catch((err) => log.error('agent.orphan_delete_failed', { agentId: agent.id, serviceId: created!.serviceId, ...errorFields(err) }))
    }
    await recordStatus(services, agent, 'error', reason).catch((err) => log.error('agent.record_failed', { agentId: agent.id, ...errorFields(err) }))
    throw e instanceof RuntimeProviderError
      ? new ApiError('RUNTIME_UNAVAILABLE')
      : e
  }
}

/**
 * Stores an agent's new status (and what else changed) with its transition, as the agent's owner. An agent deleted
 * meanwhile is 404 `Agent not found` (nothing to record).
 */
export async function recordStatus(
  services: Pick<Services, 'db'>,
  agent: Pick<Agent, 'id' | 'userId' | 'status'>,
  status: string,
  reason: string | null,
  changes: Partial<Pick<Agent, 'runtimeServiceId' | 'runtimeUrl' | 'provisionedAt' | 'startedAt' | 'image' | 'lastSeenAt' | 'gatewayToken' | 'gatewayTokenKeyId'>> = {},
): Promise<Agent> {
  return withUser(services.db, agent.userId, async (tx) => {
    const [row] = await tx
      .update(agents)
      .set({ status, statusReason: reason, ...changes, updatedAt: new Date() })
      .where(eq(agents.id, agent.id))
      .returning()
    if (!row) throw agentNotFound()
    if (agent.status !== status) {
      await tx.insert(agentEvents).values({ agentId: agent.id, userId: agent.userId, kind: 'status', fromState: agent.status, toState: status, reason })
    }
    return row
  })
}
