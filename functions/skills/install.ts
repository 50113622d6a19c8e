import { and, count, desc, eq, ne, or, sql } from 'drizzle-orm'
import { agentNotFound, isGatewayTokenUnreadable } from '../../lib/agents/access'
import { syncAgent } from '../../lib/agents/sync'
import type { Services } from '../../lib/context'
import type { Db } from '../../lib/db/rls'
import { withUser } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { RuntimeProviderError } from '../../lib/runtime/provider'
import { agentEvents, agents, skillInstallations, type Agent } from '../../schema'
import { assertBelowAgentLimit, countUserAgents, lockUserAgents } from '../../lib/agents/provision'
import type { PlanName } from '../../lib/billing/plans'

/** Installations one agent may hold (enabled or not): its sync payload stays far below the runtime's 1 MB. */
export const MAX_SKILLS_PER_AGENT = 100

/**
 * The caller's agent that `agentId` names (spec 2 "Skills": "database agent id or runtime instance id"), in one
 * query, in this order: the caller's agent with that id; the caller's agent whose runtime has that provider
 * service id (`runtimeServiceId`); for the caller's instance id (their user id, as `/api/instance/:userId` takes
 * it), their instance agent (the most recent that is not a template). Null when none: another user's ids never
 * match (RLS and the `user_id` condition both).
 *
 * The platform records every managed runtime as an agent before it creates the runtime (lib/agents/provision.ts),
 * so a runtime id resolves to the agent already backing it: no second agent record is made for it (one
 * would count against the plan's agents, and deleting it would delete the shared runtime).
 */
export async function findTargetAgent(db: Db, userId: string, agentId: string): Promise<Agent | null> {
  const [agent] = await withUser(db, userId, (tx) =>
    tx
      .select()
      .from(agents)
      .where(
        and(
          eq(agents.userId, userId),
          or(eq(agents.id, agentId), eq(agents.runtimeServiceId, agentId), agentId === userId ? ne(agents.status, 'template') : undefined),
        ),
      )
      .orderBy(
        desc(sql`${agents.id} = ${agentId}`),
        desc(sql`coalesce(${agents.runtimeServiceId} = ${agentId}, false)`),
        desc(agents.createdAt),
        desc(agents.id),
      )
      .limit(1),
  )
  return agent ?? null
}

/** The backing agent the spec names for a managed runtime that has no agent record of its own. */
export const MANAGED_RUNTIME_AGENT = { name: 'Managed OpenClaw Runtime', model: 'openclaw' } as const

/**
 * `findTargetAgent`; else, for the caller's own instance id (their user id) with no agent behind it (a runtime the
 * backend deployed without an agent record), the backing agent `Managed OpenClaw Runtime` (model `openclaw`,
 * status `running`) when `backingPlan` (install) is given. The backing agent is an agent like any other: it is
 * made only under the caller's paid access (`backingPlan` is `requirePaidAccess`'s plan) and counts against that
 * plan's agents, under the same per-user lock and count as provisioning (429 `AGENT_LIMIT` when full), so
 * concurrent installs make one, and none past the plan. Else 404 `Agent not found`.
 */
export async function requireTargetAgent(db: Db, userId: string, agentId: string, opts: { backingPlan?: PlanName } = {}): Promise<Agent> {
  const agent = await findTargetAgent(db, userId, agentId)
  if (agent) return agent
  const plan = opts.backingPlan
  if (!plan || agentId !== userId) throw agentNotFound()
  const backing = await withUser(db, userId, async (tx) => {
    await lockUserAgents(tx, userId)
    // Made by a concurrent install while this one waited for the lock: that one is the backing agent.
    const [made] = await tx.select().from(agents).where(and(eq(agents.userId, userId), eq(agents.name, MANAGED_RUNTIME_AGENT.name))).limit(1)
    if (made) return made
    assertBelowAgentLimit(plan, await countUserAgents(tx, userId))
    const [row] = await tx
      .insert(agents)
      .values({ userId, name: MANAGED_RUNTIME_AGENT.name, plan, config: { model: MANAGED_RUNTIME_AGENT.model }, status: 'running' })
      .returning()
    await tx.insert(agentEvents).values({ agentId: row.id, userId, kind: 'status', toState: 'running', reason: 'Backing agent of a managed runtime (skill install)' })
    return row
  })
  log.info('skills.backing_agent', { agentId: backing.id })
  return backing
}

export interface Installed {
  id: string
  skillId: string
  agentId: string
  installedAt: string
}

/** What install did (spec 2 "Skill installation"): a new installation, nothing (already enabled), or re-enabled. */
export type InstallState = 'installed' | 'already_installed' | 're_enabled'

/**
 * Installs a skill on the caller's agent, as the caller, in one transaction that holds the agent's install lock:
 * concurrent installs of one skill see each other, so exactly one inserts and the rest find it
 * (`already_installed`, which is a success). The unique (agent, skill) index stands behind the lock: a duplicate
 * insert does nothing rather than fail. 400 `SKILL_LIMIT` past `MAX_SKILLS_PER_AGENT`.
 */
export async function installSkill(db: Db, agent: Agent, skillId: string): Promise<{ state: InstallState; installed: Installed }> {
  return withUser(db, agent.userId, async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`skill-installs:${agent.id}`}))`)
    const json = (row: typeof skillInstallations.$inferSelect): Installed => ({
      id: row.id,
      skillId: row.skillId,
      agentId: row.agentId,
      installedAt: row.installedAt.toISOString(),
    })
    const where = and(eq(skillInstallations.agentId, agent.id), eq(skillInstallations.skillId, skillId))
    const [existing] = await tx.select().from(skillInstallations).where(where).limit(1)
    if (existing?.enabled) return { state: 'already_installed' as const, installed: json(existing) }
    if (existing) {
      const [row] = await tx.update(skillInstallations).set({ enabled: true, updatedAt: new Date() }).where(where).returning()
      return { state: 're_enabled' as const, installed: json(row) }
    }
    const [{ n }] = await tx.select({ n: count() }).from(skillInstallations).where(eq(skillInstallations.agentId, agent.id))
    if (n >= MAX_SKILLS_PER_AGENT) {
      throw new ApiError('SKILL_LIMIT', { message: `An agent may hold at most ${MAX_SKILLS_PER_AGENT} skills: uninstall one first`, extra: { limit: MAX_SKILLS_PER_AGENT } })
    }
    const [row] = await tx.insert(skillInstallations).values({ userId: agent.userId, agentId: agent.id, skillId }).onConflictDoNothing().returning()
    if (row) return { state: 'installed' as const, installed: json(row) }
    // Only a writer that ignored the lock could have inserted meanwhile: it is installed either way.
    const [raced] = await tx.select().from(skillInstallations).where(where).limit(1)
    return { state: 'already_installed' as const, installed: json(raced) }
  })
}

/** Removes the skill from the caller's agent (enabled or disabled); false when it was not installed. */
export async function uninstallSkill(db: Db, agent: Agent, skillId: string): Promise<boolean> {
  const removed = await withUser(db, agent.userId, (tx) =>
    tx
      .delete(skillInstallations)
      .where(and(eq(skillInstallations.agentId, agent.id), eq(skillInstallations.skillId, skillId)))
      .returning({ id: skillInstallations.id }),
  )
  return removed.length > 0
}

/**
 * Pushes the agent's enabled skills to its runtime with the agents' sync (lib/agents/sync.ts). Never throws: the
 * installation is already stored, so a runtime that is missing or refuses is reported, not an error.
 */
export async function deploySkills(services: Pick<Services, 'db' | 'config' | 'runtimes'>, agent: Agent): Promise<{ deployed: boolean; deployWarning: string | null }> {
  try {
    await syncAgent(services, agent)
    return { deployed: true, deployWarning: null }
  } catch (e) {
    const noRuntime = e instanceof RuntimeProviderError && e.status === 404
    const unreadable = isGatewayTokenUnreadable(e)
    log.warn('skills.deploy_failed', { agentId: agent.id, noRuntime, unreadable, ...errorFields(e) })
    return {
      deployed: false,
      deployWarning: noRuntime
        ? 'The agent has no runtime yet: the change is saved and reaches the runtime on its next sync (POST /api/agents/{id}/sync)'
        : unreadable
          ? "The agent's gateway token cannot be read with this server's keys: the change is saved; repair the agent (POST /api/agents/{id}/repair), then sync"
          : 'The runtime did not accept the change: it is saved; retry with POST /api/agents/{id}/sync',
    }
  }
}
