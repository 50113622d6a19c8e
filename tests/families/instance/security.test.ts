import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useHarness } from '../../support/harness'
import { call, withinOneWindow } from '../../support/requests'
import { closeFakes, fake, PROBES, seedAgent } from './helpers'

let bobAgent: string
const h = useHarness()
beforeAll(async () => {
  const f = await fake({ ...PROBES.running, '/api/gateway/diagnostics': { body: { command: 'runtime.version', output: 'x', exitCode: 0, durationMs: 1 } } })
  bobAgent = (await seedAgent(h, h.users.bob, { runtimeUrl: f.url })).id
  await seedAgent(h, h.users.alice, { runtimeUrl: f.url })
})
afterAll(() => closeFakes())

describe('instance: security', () => {
  it('GET /api/instance/:userId without a session is 403; the session routes are 401', async () => {
    const res = await call(h, 'GET', `/api/instance/${h.users.bob.id}`)
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' })
    const routes: Array<[string, string]> = [
      ['GET', `/api/instance/${h.users.bob.id}/stats`],
      ['POST', `/api/instance/${h.users.bob.id}/start`],
      ['POST', `/api/instance/${h.users.bob.id}/stop`],
      ['POST', `/api/instance/${h.users.bob.id}/restart`],
      ['POST', `/api/instance/${h.users.bob.id}/factory-reset`],
      ['POST', '/api/runtime/maintenance'],
      ['GET', '/api/heartbeat'],
      ['PUT', '/api/heartbeat'],
      ['POST', '/api/heartbeat'],
      ['DELETE', '/api/heartbeat'],
      ['GET', '/api/channels'],
      ['POST', '/api/debug'],
      ['GET', '/api/support/diagnostics'],
    ]
    for (const [method, path] of routes) {
      const r = await call(h, method, path, { body: method === 'GET' ? undefined : { action: 'repair', command: 'runtime.version', agentId: bobAgent } })
      expect(r.status, `${method} ${path}`).toBe(401)
    }
  })

  it('another user’s instance id: 404 on the instance, 403 on stats and every action, nothing done', async () => {
    const alice = h.users.alice
    const res = await call(h, 'GET', `/api/instance/${h.users.bob.id}`, { user: alice })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'No instance found. Please deploy first.', code: 'NOT_FOUND' })
    expect((await call(h, 'GET', `/api/instance/${h.users.bob.id}/stats`, { user: alice })).status).toBe(403)
    for (const action of ['start', 'stop', 'restart', 'factory-reset']) {
      const r = await call(h, 'POST', `/api/instance/${h.users.bob.id}/${action}`, { user: alice })
      expect(r.status, action).toBe(403)
    }
  })

  it('another user’s agentId: 404 `Agent not found` on debug, maintenance and heartbeat; the runtime is never called', async () => {
    const alice = h.users.alice
    const dbg = await call(h, 'POST', '/api/debug', { user: alice, body: { command: 'runtime.version', agentId: bobAgent } })
    expect(dbg.status).toBe(404)
    expect(await dbg.json()).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
    expect((await call(h, 'POST', '/api/runtime/maintenance', { user: alice, body: { action: 'reset-memory', agentId: bobAgent } })).status).toBe(404)
    expect((await call(h, 'GET', `/api/heartbeat?agentId=${bobAgent}`, { user: alice })).status).toBe(404)
    expect((await call(h, 'PUT', '/api/heartbeat', { user: alice, body: { agentId: bobAgent, enabled: false } })).status).toBe(404)
    expect((await call(h, 'DELETE', '/api/heartbeat', { user: alice, body: { agentId: bobAgent } })).status).toBe(404)
  })

  it('a foreign Origin is refused on lifecycle writes', async () => {
    const r = await call(h, 'POST', `/api/instance/${h.users.alice.id}/stop`, { user: h.users.alice, headers: { origin: 'https://evil.example' } })
    expect(r.status).toBe(403)
    expect((await r.json()).code).toBe('ORIGIN_NOT_ALLOWED')
  })

  it('/api/instance/* is limited to 30 requests per minute per user', async () => {
    const u = await h.seedUser('Lim', `lim-${crypto.randomUUID()}@example.com`)
    const f = await fake(PROBES.running)
    await seedAgent(h, u, { runtimeUrl: f.url })
    await withinOneWindow(60)
    const statuses: number[] = []
    for (let i = 0; i < 31; i++) statuses.push((await call(h, 'GET', `/api/instance/${u.id}${i % 2 ? '/stats' : ''}`, { user: u })).status)
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true)
    expect(statuses[30]).toBe(429)
    const res = await call(h, 'GET', `/api/instance/${u.id}`, { user: u })
    expect(res.headers.get('retry-after')).toEqual(expect.any(String))
    // another user is not affected
    expect((await call(h, 'GET', `/api/instance/${h.users.alice.id}`, { user: h.users.alice })).status).toBe(200)
  })
})
