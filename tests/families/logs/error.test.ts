import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logTails } from '../../../lib/logs/tail'
import { useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { active, agentWithoutRuntime, closeAllStreams, connect, eventually, history } from './helpers'

const h = useHarness()
beforeAll(async () => {
  logTails(h.services.runtimes).options.graceMs = 200
})
afterAll(() => closeAllStreams())

describe('live log tail: bad input and faults', () => {
  it('an agent that does not exist → 404 `Agent not found` on every per-agent route', async () => {
    for (const [method, op] of [['GET', 'stream'], ['GET', 'history'], ['POST', 'stop']] as const) {
      const res = await call(h, method, `/api/logs/${crypto.randomUUID()}/${op}`, { user: h.users.alice })
      expect(res.status, op).toBe(404)
      expect(await res.json()).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
    }
  })

  it('an agent id over 100 characters → 400 VALIDATION, nothing looked up', async () => {
    const res = await call(h, 'GET', `/api/logs/${'a'.repeat(101)}/history`, { user: h.users.alice })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ code: 'VALIDATION' })
  })

  it('history and stop without a running tail: inactive, empty, nothing stopped; nothing is started', async () => {
    const agent = await agentWithoutRuntime(h, h.users.alice, 'idle')
    expect(await history(h, h.users.alice, agent.id)).toEqual({ agentId: agent.id, active: false, lines: [] })
    const res = await call(h, 'POST', `/api/logs/${agent.id}/stop`, { user: h.users.alice })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ agentId: agent.id, stopped: false })
    expect(await active(h, h.users.alice)).toEqual([])
  })

  it('an agent whose runtime does not exist: `connected`, then `exit` with code 1 and the reason; the tail is gone', async () => {
    const agent = await agentWithoutRuntime(h, h.users.alice, 'broken')
    const client = await connect(h, h.users.alice, agent.id)
    expect(client.status).toBe(200)
    const exit = await client.next((e) => e.type === 'exit')
    expect(exit).toEqual({ type: 'exit', agentId: agent.id, text: 'Log stream failed: Runtime not found', code: 1 })
    await client.closed
    expect(client.events.map((e) => e.type)).toEqual(['connected', 'exit'])
    expect(await eventually(() => active(h, h.users.alice), (t) => t.length === 0)).toEqual([])
  })

  it('unknown methods on the log routes → 405, a path outside them → 404', async () => {
    const agent = await agentWithoutRuntime(h, h.users.alice, 'methods')
    const put = await call(h, 'PUT', `/api/logs/${agent.id}/stop`, { user: h.users.alice })
    expect(put.status).toBe(405)
    await put.arrayBuffer()
    const other = await call(h, 'GET', `/api/logs/${agent.id}/nope`, { user: h.users.alice })
    expect(other.status).toBe(404)
    await other.arrayBuffer()
  })
})
