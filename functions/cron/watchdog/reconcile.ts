import { and, asc, eq, gt, gte, inArray, not, notInArray, or, sql } from 'drizzle-orm'
import { runtimeTarget } from '../../../lib/agents/access'
import { forgetProbe } from '../../../lib/agents/instance'
import { HOLDS_A_PLACE, SUSPENDED } from '../../../lib/agents/suspension'
import { PLAN_RECORD_COLUMNS } from '../../../lib/auth/plan'
import { accessPlan, agentLimitSql, paidAccessSql, PLANS } from '../../../lib/billing/plans'
import { asService } from '../../../lib/db/rls'
import { errorFields, log } from '../../../lib/log'
import { RuntimeProviderError } from '../../../lib/runtime/provider'
import { agentEvents, agents, users, type Agent } from '../../../schema'
import { mapLimit, type WatchdogDeps } from '../../../lib/watchdog/deps'
import { MAX_SUSPENSIONS } from '../../../lib/watchdog/subrequests'
import { watchdogSettings } from '../../../lib/watchdog/rules'

/**
 * Paid access over time (0-decisions "Access over time"): when a user's paid access ends (the trial over, the
 * subscription `canceled`), their runtimes are stopped through the runtime provider and their agents marked
 * `suspended` (with the reason, and the transition in `agent_events`); nothing is deleted. A plan with fewer agents
 * than the user has holding a place (not suspended, not templates) suspends the newest beyond its count. Suspended
 * agents are not watched (never repaired); `start` resumes one once the owner pays again and the plan has room
 * (lib/agents/suspension.ts).
 *
 * Run by every cron sweep of the watchdog (./sweep.ts), so within one watchdog interval, and at once for the users a
 * payment event concerns (`{userIds}`, published by functions/stripe/subscription.ts). It costs one query however many
 * users pay: the agents holding a place are ranked per user (oldest first) and joined to their owner's row, and only
 * those to suspend are returned (the owner has no paid access by `paidAccessSql`, or the agent's rank is past
 * `agentLimitSql`): nothing is read per user. `accessPlan` then confirms each one from the same row before anything
 * is stopped. At most `MAX_SUSPENSIONS` agents a run (a Worker's subrequests); the rest are taken by the next.
 */

export interface ReconcileResult {
  /** Agents marked `suspended` by this run (their runtimes stopped, or they had none). */
  suspended: number
  /** Agents found to suspend whose runtime could not be stopped now: left as they were, retried by the next run. */
  failed: number
}

interface Candidate {
  agent: Agent
  reason: string
}

/** The agents to suspend now (of `userIds` only, when given), each with why. */
async function candidates(deps: WatchdogDeps, now: number, userIds?: string[]): Promise<Candidate[]> {
  const { config } = deps
  return asService(deps.db, 'accessReconciliation', async (tx) => {
    const place = sql<number>`row_number() over (partition by ${agents.userId} order by ${agents.createdAt}, ${agents.id})`.as('place')
    const live = tx
      .$with('live')
      .as(tx.select({ id: agents.id, userId: agents.userId, place }).from(agents).where(and(HOLDS_A_PLACE, userIds ? inArray(agents.userId, userIds) : undefined)))
    const limit = agentLimitSql(config)
    const found = await tx
      .with(live)
      .select({ id: live.id, place: live.place, owner: PLAN_RECORD_COLUMNS })
      .from(live)
      .innerJoin(users, eq(users.id, live.userId))
      .where(or(not(paidAccessSql(config, new Date(now))), and(gte(limit, 0), gt(live.place, limit))))
      .orderBy(asc(live.userId), asc(live.place))
      .limit(MAX_SUSPENSIONS)
    if (!found.length) return []
    const rows = await tx.select().from(agents).where(and(inArray(agents.id, found.map((f) => f.id)), HOLDS_A_PLACE))
    const byId = new Map(rows.map((a) => [a.id, a]))
    return found.flatMap(({ id, place, owner }): Candidate[] => {
      const agent = byId.get(id)
      if (!agent) return [] // suspended or deleted since the query
      // The one rule decides, from the row the query read.
      const plan = accessPlan(owner, config, now)
      if (!plan) return [{ agent, reason: 'Paid access ended: start it again once a plan is active' }]
      const allowed = PLANS[plan].agents
      if (allowed >= 0 && Number(place) > allowed) return [{ agent, reason: `The ${plan} plan allows ${allowed} agent${allowed === 1 ? '' : 's'}: the newest beyond it are suspended` }]
      return []
    })
  })
}

/**
 * Stops the runtime of each agent to suspend (at the watchdog's concurrency), then records the suspensions in one
 * transaction. A runtime the provider does not have (404), or an agent without one, is suspended as it is; any other
 * provider failure leaves the agent untouched for the next run.
 */
export async function reconcileAccess(deps: WatchdogDeps, opts: { userIds?: string[] } = {}): Promise<ReconcileResult> {
  const now = deps.now()
  const found = await candidates(deps, now, opts.userIds)
  if (!found.length) return { suspended: 0, failed: 0 }
  const s = watchdogSettings(deps.config)
  const stopped = (
    await mapLimit(found, s.concurrency, async (c): Promise<Candidate | null> => {
      const { agent } = c
      const hasRuntime = !!(agent.runtimeServiceId || agent.runtimeUrl)
      if (!hasRuntime || agent.status === 'stopped') return c
      try {
        await forgetProbe(deps, agent.id)
        await deps.runtimes.stop(await runtimeTarget(deps.config, agent))
        return c
      } catch (e) {
        if (e instanceof RuntimeProviderError && e.status === 404) return c
        log.error('watchdog.suspend_stop_failed', { agentId: agent.id, ...errorFields(e) })
        return null
      } finally {
        await forgetProbe(deps, agent.id).catch(() => {})
      }
    })
  ).filter((c): c is Candidate => c !== null)

  const at = new Date(now)
  const suspended = stopped.length
    ? await asService(deps.db, 'accessReconciliation', async (tx) => {
        // Locked, so the status each transition records from is the one it leaves.
        const current = await tx
          .select({ id: agents.id, status: agents.status })
          .from(agents)
          .where(and(inArray(agents.id, stopped.map((c) => c.agent.id)), notInArray(agents.status, [SUSPENDED, 'template'])))
          .for('update')
        const from = new Map(current.map((a) => [a.id, a.status]))
        const mine = stopped.filter((c) => from.has(c.agent.id))
        for (const c of mine) {
          await tx.update(agents).set({ status: SUSPENDED, statusReason: c.reason, updatedAt: at }).where(eq(agents.id, c.agent.id))
        }
        if (mine.length) {
          await tx.insert(agentEvents).values(
            mine.map((c) => ({ agentId: c.agent.id, userId: c.agent.userId, kind: 'status', fromState: from.get(c.agent.id)!, toState: SUSPENDED, reason: c.reason, at })),
          )
        }
        return mine
      })
    : []
  for (const c of suspended) log.info('watchdog.suspended', { agentId: c.agent.id, from: c.agent.status })
  const result = { suspended: suspended.length, failed: found.length - stopped.length }
  log.info('watchdog.reconcile', { ...result, users: opts.userIds?.length ?? null })
  return result
}
