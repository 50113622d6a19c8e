import { eq, inArray } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { reconcileLocalAgents, RESTART_INTERRUPTED_REASON, RESTART_STOPPED_REASON } from '../../infra/local-restart'
import { agentEvents, agents } from '../../schema'
import { seedAgent } from '../families/instance/helpers'
import { HEALTHY, startFakeRuntime } from '../support/fake-runtime'
import { useFixture, useHarness } from '../support/harness'
import { call } from '../support/requests'

/**
 * What the local server does at start (infra/local-restart.ts) with the agents a previous start left: local
 * runtimes end with their server, so an agent still recorded `starting` or `running` with nothing at its address
 * reads `stopped` (with the reason and its event), one cut off while `provisioning` reads `error`; anything else,
 * and a runtime that still answers (another server's, on a shared database), is left as it is.
 */
const h = useHarness()
const alive = useFixture(() => startFakeRuntime({ '/healthz': HEALTHY.healthz }))

/** A loopback address nothing listens on (the discard port). */
const GONE = 'http://127.0.0.1:9'

describe('reconcileLocalAgents (the local server’s start)', () => {
  it('records what no longer runs as stopped (or error), with reason and event; leaves the rest; the API then says so', async () => {
    const alice = h.users.alice
    const seed = (status: string, over: Partial<typeof agents.$inferInsert> = {}) => seedAgent(h, alice, { status, runtimeProvider: 'local', runtimeUrl: GONE, ...over })
    const running = await seed('running')
    const starting = await seed('starting', { runtimeUrl: null })
    const provisioning = await seed('provisioning', { runtimeUrl: null })
    const answering = await seed('running', { runtimeUrl: alive.url })
    const stopped = await seed('stopped', { statusReason: 'stopped by request' })
    const errored = await seed('error', { statusReason: 'restart failed: boom' })
    const railway = await seed('running', { runtimeProvider: 'railway' })
    const template = await seed('template', { runtimeUrl: null })

    expect(await reconcileLocalAgents(h.services, { probeTimeoutMs: 2000 })).toEqual({ stopped: 2, interrupted: 1, answering: 1 })

    const rows = await h.db.select().from(agents).where(eq(agents.userId, alice.id))
    const byId = new Map(rows.map((r) => [r.id, r]))
    const state = (a: { id: string }) => ({ status: byId.get(a.id)!.status, reason: byId.get(a.id)!.statusReason })
    expect(state(running)).toEqual({ status: 'stopped', reason: RESTART_STOPPED_REASON })
    expect(state(starting)).toEqual({ status: 'stopped', reason: RESTART_STOPPED_REASON })
    expect(state(provisioning)).toEqual({ status: 'error', reason: RESTART_INTERRUPTED_REASON })
    expect(state(answering)).toEqual({ status: 'running', reason: null })
    expect(state(stopped)).toEqual({ status: 'stopped', reason: 'stopped by request' })
    expect(state(errored)).toEqual({ status: 'error', reason: 'restart failed: boom' })
    expect(state(railway)).toEqual({ status: 'running', reason: null })
    expect(state(template)).toEqual({ status: 'template', reason: null })

    const events = await h.db.select().from(agentEvents).where(inArray(agentEvents.agentId, [running.id, starting.id, provisioning.id, answering.id]))
    expect(events.map((e) => [e.agentId, e.kind, e.fromState, e.toState, e.reason]).sort()).toEqual(
      [
        [running.id, 'status', 'running', 'stopped', RESTART_STOPPED_REASON],
        [starting.id, 'status', 'starting', 'stopped', RESTART_STOPPED_REASON],
        [provisioning.id, 'status', 'provisioning', 'error', RESTART_INTERRUPTED_REASON],
      ].sort(),
    )

    // What the owner reads: the list and the details no longer claim a runtime that is not there.
    const list = (await (await call(h, 'GET', '/api/agents', { user: alice })).json()) as { agents: Array<{ id: string; status: string }> }
    expect(list.agents.find((a) => a.id === running.id)?.status).toBe('stopped')
    expect(await (await call(h, 'GET', `/api/agents/${starting.id}`, { user: alice })).json()).toMatchObject({ status: 'stopped', statusReason: RESTART_STOPPED_REASON })

    // A second start finds nothing more to do.
    expect(await reconcileLocalAgents(h.services, { probeTimeoutMs: 2000 })).toEqual({ stopped: 0, interrupted: 0, answering: 1 })
  })
})
