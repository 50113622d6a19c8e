import { and, count, eq, notInArray } from 'drizzle-orm'
import type { Services } from '../context'
import { withUser } from '../db/rls'
import { ApiError } from '../http/errors'
import type { PlanName } from '../billing/plans'
import { agentEvents, agents, type Agent } from '../../schema'
import { agentNotFound } from './access'
import { assertBelowAgentLimit, lockUserAgents } from './provision'

/**
 * An agent whose owner's paid access ended (or whose plan allows fewer agents than the owner runs): its runtime was
 * stopped by the watchdog's reconciliation (functions/cron/watchdog/reconcile.ts) and nothing was deleted. Only `start` brings
 * it back, once the owner has paid access again and their plan has room for it (`resumeAgent`).
 */
export const SUSPENDED = 'suspended'

/** Agents that hold one of the plan's places: all but the suspended ones and templates (which never run). */
export const HOLDS_A_PLACE = notInArray(agents.status, [SUSPENDED, 'template'])

/** 409 for using a suspended agent (anything but `start`, and `stop`, which has nothing to do): start it first. */
export const suspendedAgent = () => new ApiError('INVALID_TRANSITION', 'Agent suspended: start it again')

/**
 * Takes a suspended agent back under its owner's plan (`plan`: `requirePaidAccess`'s answer, so the owner pays now):
 * under the user's agent lock, the agents holding a place are counted (429 `AGENT_LIMIT` when the plan is full) and
 * the agent is moved to `starting` with its transition, before the runtime is started, so two resumes at the limit
 * cannot both pass. An agent no longer suspended (resumed meanwhile) is answered as it is.
 */
export async function resumeAgent(services: Pick<Services, 'db'>, agent: Agent, plan: PlanName): Promise<Agent> {
  return withUser(services.db, agent.userId, async (tx) => {
    await lockUserAgents(tx, agent.userId)
    const [{ n }] = await tx
      .select({ n: count() })
      .from(agents)
      .where(and(eq(agents.userId, agent.userId), HOLDS_A_PLACE))
    assertBelowAgentLimit(plan, n)
    const [row] = await tx
      .update(agents)
      .set({ status: 'starting', statusReason: null, updatedAt: new Date() })
      .where(and(eq(agents.id, agent.id), eq(agents.status, SUSPENDED)))
      .returning()
    if (row) {
      await tx.insert(agentEvents).values({ agentId: agent.id, userId: agent.userId, kind: 'status', fromState: SUSPENDED, toState: 'starting', reason: 'Resumed: paid access is back' })
      return row
    }
    const [current] = await tx.select().from(agents).where(eq(agents.id, agent.id))
    if (!current) throw agentNotFound()
    return current
  })
}
