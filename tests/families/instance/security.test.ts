import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useHarness } from '../../support/harness'
import { call, freshIp, withinOneWindow } from '../../support/requests'
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

  it('/api/instance/* is limited to 30 requests per minute per user (from the user’s own address)', async () => {
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

  it('/api/instance/* and maintenance: 30 a minute from one client address, whichever users sign in there', async () => {
    const f = await fake(PROBES.running)
    const users = [await h.seedUser('IpA', `ipa-${crypto.randomUUID()}@example.com`), await h.seedUser('IpB', `ipb-${crypto.randomUUID()}@example.com`)]
    for (const u of users) await seedAgent(h, u, { runtimeUrl: f.url })
    await withinOneWindow(60)
    const ip = { 'cf-connecting-ip': freshIp() }
    const statuses: number[] = []
    for (let i = 0; i < 30; i++) statuses.push((await call(h, 'GET', `/api/instance/${users[i % 2].id}/stats`, { user: users[i % 2], headers: ip })).status)
    expect(new Set(statuses)).toEqual(new Set([200]))
    // The address is spent: a third user there is refused, on maintenance too (the same counter).
    const third = await h.seedUser('IpC', `ipc-${crypto.randomUUID()}@example.com`)
    const refused = await call(h, 'POST', '/api/runtime/maintenance', { user: third, body: { action: 'reset-memory' }, headers: ip })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(refused.headers.get('ratelimit-limit')).toBe('30')
    // The same users from their own addresses still pass (15 of their own 30 used).
    const own = await call(h, 'GET', `/api/instance/${users[0].id}`, { user: users[0], headers: { 'cf-connecting-ip': freshIp() } })
    expect(own.status).toBe(200)
    expect(own.headers.get('ratelimit-remaining')).toBe('14')
  })

  it('/api/instance/*: 30 a minute per user too, across addresses', async () => {
    const u = await h.seedUser('Roam', `roam-${crypto.randomUUID()}@example.com`)
    const f = await fake(PROBES.running)
    await seedAgent(h, u, { runtimeUrl: f.url })
    await withinOneWindow(60)
    for (let i = 0; i < 30; i++) expect((await call(h, 'GET', `/api/instance/${u.id}`, { user: u, headers: { 'cf-connecting-ip': freshIp() } })).status).toBe(200)
    expect((await call(h, 'GET', `/api/instance/${u.id}`, { user: u, headers: { 'cf-connecting-ip': freshIp() } })).status).toBe(429)
  })
})
