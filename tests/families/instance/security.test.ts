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

// Without a session, with a forged one, and another user's instance id: tests/families/common-route-checks.test.ts.
describe('instance: security', () => {
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
