import { and, eq, inArray, sql } from 'drizzle-orm'
import { runtimeTarget } from '../../../lib/agents/access'
import { forgetProbe } from '../../../lib/agents/instance'
import { PLAN_RECORD_COLUMNS } from '../../../lib/auth/plan'
import { hasPaidAccess } from '../../../lib/billing/plans'
import { anyOf } from './any-of'
import { asService } from '../../../lib/db/rls'
import { errorFields, log } from '../../../lib/log'
import { checkRuntime, type RuntimeStatus } from '../../../lib/runtime/probe'
import { agentEvents, agents, agentWatchdog, users, type Agent } from '../../../schema'
import { flow, leaseMs, mapLimit, WATCHDOG_PATH, WATCHED, type WatchdogDeps } from '../../../lib/watchdog/deps'
import { MAX_BATCH } from '../../../lib/watchdog/subrequests'
import { crashLoopMail } from './notice'
import { decide, watchdogSettings, type Decision, type WatchdogRow } from '../../../lib/watchdog/rules'

/** One batch delivery of the watchdog (./sweep.ts publishes them): lease, probe, judge, repair, notify, record. */
export interface BatchResult {
  /** Agents leased and probed by this delivery (the others were not due, leased elsewhere or not running). */
  checked: number
  healthy: number
  /** Agents left degraded or repairing, re-probed by a delayed message. */
  degraded: number
  repairs: number
  crashLoops: number
}

/** What a batch reads of a leased agent (the repair path reads the whole row, for the few it repairs). */
const LEASED_AGENT = { id: agents.id, userId: agents.userId, name: agents.name, runtimeUrl: agents.runtimeUrl }
/** What the rules read of an agent's watchdog row (`WatchdogRow`). */
const LEASED_WATCH = {
  state: agentWatchdog.state,
  consecutiveFailures: agentWatchdog.consecutiveFailures,
  repairAttempts: agentWatchdog.repairAttempts,
  crashTimes: agentWatchdog.crashTimes,
  lastProbeAt: agentWatchdog.lastProbeAt,
  ownerNotifiedAt: agentWatchdog.ownerNotifiedAt,
}

interface Leased {
  agent: { id: string; userId: string; name: string; runtimeUrl: string | null }
  watch: WatchdogRow
}

/** A column's bare name, as an INSERT's column list and its ON CONFLICT target want it. */
const name = (column: { name: string }) => sql.identifier(column.name)

interface Outcome extends Leased {
  probe: { status: RuntimeStatus; statusReason: string | null }
  d: Decision
  /** The repair was requested and accepted by the provider (false when it failed). */
  repaired: boolean
  /** The whole agent row, read for a repair (the provider's target needs it). */
  target?: Agent
  notified: boolean
}

/** Leases, probes and judges the named agents that are due; releases each lease with the outcome. */
export async function checkAgents(deps: WatchdogDeps, agentIds: string[]): Promise<BatchResult> {
  const result: BatchResult = { checked: 0, healthy: 0, degraded: 0, repairs: 0, crashLoops: 0 }
  const ids = [...new Set(agentIds)].slice(0, MAX_BATCH)
  if (!ids.length) return result
  const s = watchdogSettings(deps.config)
  const now = deps.now()
  const at = new Date(now)
  const owner = crypto.randomUUID()

  // 1. Lease, in one statement: a row for agents never watched, leased as it is made; the lease on the others that are
  // due and free. Under concurrency the update waits for a delivery leasing the same row and re-reads it: a lease
  // taken meanwhile excludes it (as does a row another delivery made meanwhile, which conflicts and is then leased).
  // INSERT … SELECT with the ids as one array: the statement is the same size for 1 agent or MAX_BATCH; it answers what it
  // leased with the agent's columns a batch reads.
  const leaseUntil = new Date(now + leaseMs(s)).toISOString()
  const atIso = at.toISOString()
  const leased = await asService(deps.db, 'watchdog', async (tx): Promise<Leased[]> => {
    const w = agentWatchdog
    const taken = tx.$with('taken', { agentId: w.agentId, ...LEASED_WATCH }).as(sql`
      insert into ${w} (${name(w.agentId)}, ${name(w.userId)}, ${name(w.leaseUntil)}, ${name(w.leaseOwner)}, ${name(w.updatedAt)})
      select ${agents.id}, ${agents.userId}, ${leaseUntil}::timestamptz, ${owner}::text, ${atIso}::timestamptz from ${agents}
      where ${anyOf(agents.id, ids)} and ${inArray(agents.status, WATCHED)}
      on conflict (${name(w.agentId)}) do update set ${name(w.leaseUntil)} = excluded.${name(w.leaseUntil)}, ${name(w.leaseOwner)} = excluded.${name(w.leaseOwner)}
      where (${w.leaseUntil} is null or ${w.leaseUntil} <= ${atIso}::timestamptz) and (${w.nextCheckAt} is null or ${w.nextCheckAt} <= ${atIso}::timestamptz)
      returning ${sql.join([w.agentId, ...Object.values(LEASED_WATCH)].map(name), sql`, `)}`)
    return tx
      .with(taken)
      .select({
        agent: LEASED_AGENT,
        watch: { state: taken.state, consecutiveFailures: taken.consecutiveFailures, repairAttempts: taken.repairAttempts, crashTimes: taken.crashTimes, lastProbeAt: taken.lastProbeAt, ownerNotifiedAt: taken.ownerNotifiedAt },
      })
      .from(taken)
      .innerJoin(agents, eq(agents.id, taken.agentId))
  })
  if (!leased.length) return result

  // 2. Probe, bounded; 3. judge; repair and notify where the rules say so.
  let outcomes = await mapLimit(leased, s.concurrency, async ({ agent, watch }): Promise<Outcome> => {
    const probe = agent.runtimeUrl ? await checkRuntime(agent.runtimeUrl) : { status: 'unreachable' as const, statusReason: 'The agent has no runtime URL' }
    const d = decide(watch, probe, now, s)
    return { agent, watch, probe, d, repaired: false, notified: false }
  })
  // A repair restarts the runtime: only for agents still meant to run (the owner may have stopped or deleted one
  // since the lease was taken) whose owner has paid access now (a lapsed owner's runtime is stopped by the sweep's
  // reconciliation, never repaired). The others are left out of the record; their lease is released below.
  const repairable = outcomes.filter((o) => o.d.repair)
  if (repairable.length) {
    const still = await asService(deps.db, 'accessReconciliation', (tx) =>
      tx
        .select({ agent: agents, owner: PLAN_RECORD_COLUMNS })
        .from(agents)
        .innerJoin(users, eq(users.id, agents.userId))
        .where(and(anyOf(agents.id, repairable.map((o) => o.agent.id)), inArray(agents.status, WATCHED))),
    )
    const watched = new Map(still.filter((r) => hasPaidAccess(r.owner, deps.config, now)).map((r) => [r.agent.id, r.agent]))
    for (const o of repairable) o.target = watched.get(o.agent.id)
    const gone = new Set(repairable.filter((o) => !o.target))
    if (gone.size) {
      log.info('watchdog.repair_skipped', { agents: gone.size })
      outcomes = outcomes.filter((o) => !gone.has(o))
    }
  }
  await mapLimit(
    outcomes.filter((o) => o.d.repair),
    s.concurrency,
    async (o) => {
      // As lib/agents/lifecycle.ts `runLifecycle(…, 'repair')`: the cached probe dropped before and after, the status
      // `starting` recorded with the transition (below, with the outcome). A failed repair leaves the status as it was.
      await forgetProbe(deps, o.agent.id)
      try {
        await deps.runtimes.repair(await runtimeTarget(deps.config, o.target!))
        o.repaired = true
      } catch (e) {
        o.d = { ...o.d, state: 'degraded', reason: `Repair ${o.d.repairAttempts} of ${s.maxRepairAttempts} failed: ${e instanceof Error ? e.message : 'provider error'}` }
        log.error('watchdog.repair_failed', { agentId: o.agent.id, ...errorFields(e) })
      } finally {
        await forgetProbe(deps, o.agent.id).catch((e) => log.warn('watchdog.probe_cache_failed', { agentId: o.agent.id, ...errorFields(e) }))
      }
    },
  )
  await notifyOwners(deps, outcomes.filter((o) => o.d.notify), s.crashLoopWindowMs)

  // 4. Record: the outcome on each row (a lease lost meanwhile writes nothing), its transition, the agent's last sighting.
  await asService(deps.db, 'watchdog', async (tx) => {
    const mine = (id: string) => and(eq(agentWatchdog.agentId, id), eq(agentWatchdog.leaseOwner, owner))
    // Only agents that still exist (one deleted since the lease would break the events' foreign key and roll the
    // whole batch back), locked so their status read here holds until the commit; in the same statement, the last
    // sighting of those whose runtime answered.
    const locked = tx.$with('locked').as(tx.select({ id: agents.id, status: agents.status }).from(agents).where(anyOf(agents.id, outcomes.map((o) => o.agent.id))).for('update'))
    const seen = tx.$with('seen').as(
      tx
        .update(agents)
        .set({ lastSeenAt: at })
        .where(and(anyOf(agents.id, outcomes.filter((o) => o.d.alive).map((o) => o.agent.id)), inArray(agents.id, tx.select({ id: locked.id }).from(locked))))
        .returning({ id: agents.id }),
    )
    const existing = outcomes.length ? await tx.with(locked, seen).select({ id: locked.id, status: locked.status }).from(locked) : []
    const statusOf = new Map(existing.map((a) => [a.id, a.status]))
    // Deleted agents are out of the record and of the result.
    outcomes = outcomes.filter((o) => statusOf.has(o.agent.id))
    const plain = outcomes.filter((o) => o.d.state === 'healthy' && o.d.reason === null && !o.d.clearNotified && o.d.crashTimes.length === o.watch.crashTimes.length)
    if (plain.length) {
      await tx
        .update(agentWatchdog)
        .set({ state: 'healthy', reason: null, consecutiveFailures: 0, repairAttempts: 0, lastProbeAt: at, nextCheckAt: plain[0].d.nextCheckAt, leaseUntil: null, leaseOwner: null, updatedAt: at })
        .where(and(anyOf(agentWatchdog.agentId, plain.map((o) => o.agent.id)), eq(agentWatchdog.leaseOwner, owner)))
    }
    const plainSet = new Set(plain)
    for (const o of outcomes) {
      if (plainSet.has(o)) continue
      await tx
        .update(agentWatchdog)
        .set({
          state: o.d.state,
          reason: o.d.reason,
          consecutiveFailures: o.d.consecutiveFailures,
          repairAttempts: o.d.repairAttempts,
          crashTimes: o.d.crashTimes,
          lastProbeAt: at,
          nextCheckAt: o.d.nextCheckAt,
          leaseUntil: null,
          leaseOwner: null,
          updatedAt: at,
          ...(o.notified ? { ownerNotifiedAt: at } : o.d.clearNotified ? { ownerNotifiedAt: null } : {}),
        })
        .where(mine(o.agent.id))
    }
    const events = outcomes
      .filter((o) => o.watch.lastProbeAt === null || o.watch.state !== o.d.state || o.d.repair)
      .map((o) => ({
        agentId: o.agent.id,
        userId: o.agent.userId,
        fromState: o.watch.lastProbeAt === null ? null : o.watch.state,
        toState: o.d.state,
        reason: o.d.reason ?? (o.watch.lastProbeAt === null ? 'First check: the runtime answers' : 'The runtime answers again'),
      }))
    if (events.length) {
      // One row a transition, from arrays (unnest): a first sweep records one for every agent.
      const e = agentEvents
      const column = <K extends keyof (typeof events)[number]>(key: K) => sql.param(events.map((ev) => ev[key]))
      await tx.execute(sql`
        insert into ${e} (${name(e.id)}, ${name(e.agentId)}, ${name(e.userId)}, ${name(e.kind)}, ${name(e.fromState)}, ${name(e.toState)}, ${name(e.reason)}, ${name(e.at)})
        select id, agent_id, user_id, 'watchdog', from_state, to_state, reason, ${atIso}::timestamptz
        from unnest(${sql.param(events.map(() => crypto.randomUUID()))}::text[], ${column('agentId')}::text[], ${column('userId')}::text[], ${column('fromState')}::text[], ${column('toState')}::text[], ${column('reason')}::text[])
          as t(id, agent_id, user_id, from_state, to_state, reason)`)
    }

    // A repaired runtime is starting again (`startedAt` now), as runLifecycle records a repair.
    const restarted = outcomes.filter((o) => o.repaired && WATCHED.includes(statusOf.get(o.agent.id)!))
    if (restarted.length) {
      await tx.update(agents).set({ status: 'starting', statusReason: null, startedAt: at, updatedAt: at }).where(inArray(agents.id, restarted.map((o) => o.agent.id)))
      const moved = restarted.filter((o) => statusOf.get(o.agent.id) !== 'starting')
      if (moved.length) {
        await tx.insert(agentEvents).values(moved.map((o) => ({ agentId: o.agent.id, userId: o.agent.userId, kind: 'status', fromState: statusOf.get(o.agent.id)!, toState: 'starting', reason: null, at })))
      }
    }

    const alive = outcomes.filter((o) => o.d.alive)
    if (alive.length) {
      // A runtime that answers has finished starting (the status read above is locked: it is the one changed here; a
      // repaired agent, set `starting` above, is never alive).
      const started = alive.filter((o) => statusOf.get(o.agent.id) === 'starting')
      if (started.length) {
        await tx.update(agents).set({ status: 'running', statusReason: null, updatedAt: at }).where(inArray(agents.id, started.map((o) => o.agent.id)))
        await tx.insert(agentEvents).values(
          started.map((o) => ({ agentId: o.agent.id, userId: o.agent.userId, kind: 'status', fromState: 'starting', toState: 'running', reason: 'The runtime answers its probes', at })),
        )
      }
    }
    // Leases of agents left out (deleted, or no longer meant to run) go back; the others were released with their outcome.
    const recorded = new Set(outcomes.map((o) => o.agent.id))
    const left = leased.filter((l) => !recorded.has(l.agent.id))
    if (left.length) {
      await tx
        .update(agentWatchdog)
        .set({ leaseUntil: null, leaseOwner: null })
        .where(and(inArray(agentWatchdog.agentId, left.map((l) => l.agent.id)), eq(agentWatchdog.leaseOwner, owner)))
    }
  })

  for (const o of outcomes) {
    if (o.watch.state !== o.d.state || o.d.repair) {
      const fields = { agentId: o.agent.id, from: o.watch.state, to: o.d.state, probe: o.probe.status, repaired: o.repaired }
      if (o.d.state === 'healthy') log.info('watchdog.transition', fields)
      else log.warn('watchdog.transition', fields)
    }
  }

  // 5. Degraded agents come back after the degraded interval, as one delayed batch.
  const again = outcomes.filter((o) => o.d.nextCheckAt.getTime() - now === s.degradedCheckIntervalMs).map((o) => o.agent.id)
  if (again.length) {
    await deps.queue.publish(WATCHDOG_PATH, { agentIds: again }, { delaySec: Math.ceil(s.degradedCheckIntervalMs / 1000), flowControl: flow(s) }).catch((e) =>
      // The cron sweep picks them up anyway once due; only the cadence suffers.
      log.error('watchdog.requeue_failed', { agents: again.length, ...errorFields(e) }),
    )
  }

  result.checked = outcomes.length
  result.healthy = outcomes.filter((o) => o.d.state === 'healthy').length
  result.degraded = again.length
  result.repairs = outcomes.filter((o) => o.repaired).length
  result.crashLoops = outcomes.filter((o) => o.d.state === 'crash_loop' && o.watch.state !== 'crash_loop').length
  log.info('watchdog.batch', { ...result })
  return result
}

/** Mails each crash-looping agent's owner once; a failed send leaves the agent unmarked, so the next check retries. */
async function notifyOwners(deps: WatchdogDeps, outcomes: Outcome[], windowMs: number) {
  if (!outcomes.length) return
  const owners = await asService(deps.db, 'watchdog', (tx) =>
    tx.select({ id: users.id, email: users.email }).from(users).where(inArray(users.id, [...new Set(outcomes.map((o) => o.agent.userId))])),
  )
  const emails = new Map(owners.map((u) => [u.id, u.email]))
  for (const o of outcomes) {
    const to = emails.get(o.agent.userId)
    if (!to) continue
    try {
      await deps.mail.send(crashLoopMail(to, o.agent, o.d.crashTimes.length, Math.round(windowMs / 60_000), deps.config.baseUrl))
      o.notified = true
    } catch (e) {
      log.error('mail.notice_failed', { kind: 'agent-crash-loop', agentId: o.agent.id, ...errorFields(e) })
    }
  }
}
