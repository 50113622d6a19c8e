import { beforeAll, describe, expect, it } from 'vitest'
import type { AgentJson } from '../../../lib/agents/lifecycle'
import { signedIdentityHeaders } from '../../../lib/auth/identity'
import { setPlan } from '../../auth/helpers'
import { useHarness } from '../../support/harness'
import { backendCall, call, freshIp, withinOneWindow, FORBIDDEN_ORIGIN } from '../../support/requests'
import { AGENTS_ENV, INTERNAL_KEY, provision, storedAgent } from './helpers'

let aliceAgent: AgentJson
let aliceToken: string
const h = useHarness({ env: AGENTS_ENV })
beforeAll(async () => {
  await setPlan(h.db, h.users.alice.id, 'solo', 'sub_alice')
  aliceAgent = await provision(h, h.users.alice, { name: 'secret-agent', config: { memories: { pin: 'alice-private-memory' } } })
  aliceToken = ((await (await call(h, 'GET', `/api/agents/${aliceAgent.id}/token`, { user: h.users.alice })).json()) as { token: string }).token
})

// Without a session, with a forged one, and another user's session on each route: tests/families/common-route-checks.test.ts.
describe('agents: authentication', () => {
  it('a foreign Origin with a valid cookie → 403 on provision and on writes; nothing changes', async () => {
    const evil = { origin: 'http://evil.example' }
    for (const [method, path, body] of [['POST', '/api/provision', {}], ['DELETE', `/api/agents/${aliceAgent.id}`, undefined], ['POST', `/api/agents/${aliceAgent.id}/stop`, undefined]] as const) {
      const res = await call(h, method, path, { user: h.users.alice, body, headers: evil })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(await res.json()).toEqual(FORBIDDEN_ORIGIN)
    }
    expect((await storedAgent(h, aliceAgent.id)).status).not.toBe('stopped')
  })
})

describe('agents: ownership', () => {
  it("bob's list holds none of alice's agents", async () => {
    const list = (await (await call(h, 'GET', '/api/agents', { user: h.users.bob })).json()) as { agents: AgentJson[] }
    expect(list.agents).toEqual([])
  })

  it('the gateway token is in no answer but the owner’s token route', async () => {
    for (const path of ['/api/agents', `/api/agents/${aliceAgent.id}`, `/api/agents/${aliceAgent.id}/config`, `/api/agents/${aliceAgent.id}/stats`]) {
      expect(await (await call(h, 'GET', path, { user: h.users.alice })).text(), path).not.toContain(aliceToken)
    }
    const row = await storedAgent(h, aliceAgent.id)
    expect(row.gatewayToken).not.toContain(aliceToken)
  })
})

describe('shared-key routes', () => {
  const cases = () => [
    ['web', 'GET', `/api/agents/user/${h.users.alice.id}`],
    ['backend', 'POST', `/api/agents/${aliceAgent.id}/stop`],
    ['backend', 'POST', `/api/agents/${aliceAgent.id}/restart`],
  ] as const
  const send = (app: 'web' | 'backend', method: string, path: string, headers: Record<string, string>) =>
    app === 'web' ? h.web.request(path, { method, headers }) : backendCall(h.backend, method, path, { headers })

  it('no Bearer → 401 `Unauthorized`; a wrong key, a session cookie or a user API key → 403 `Forbidden`; nothing changes', async () => {
    for (const [app, method, path] of cases()) {
      const none = await send(app, method, path, {})
      expect(none.status, `${app} ${method} ${path}`).toBe(401)
      expect(await none.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
      const withCookie = await send(app, method, path, { cookie: h.users.alice.cookie })
      expect(withCookie.status).toBe(401)
      await withCookie.body?.cancel()
      for (const bad of [`${INTERNAL_KEY}x`, aliceToken]) {
        const res = await send(app, method, path, { authorization: `Bearer ${bad}` })
        expect(res.status, `${app} ${method} ${path}`).toBe(403)
        expect(await res.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' })
      }
    }
    expect((await storedAgent(h, aliceAgent.id)).status).not.toBe('stopped')
  })

  it('deployments: a wrong shared key → 403; unsigned identity headers → 401; signed identity → the identity’s own runtime (body userId ignored)', async () => {
    const wrong = await backendCall(h.backend, 'POST', '/api/deployments', { headers: { authorization: `Bearer ${INTERNAL_KEY}x` }, body: { userId: h.users.bob.id } })
    expect(wrong.status).toBe(403)
    expect(await wrong.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' })
    const unsigned = await backendCall(h.backend, 'POST', '/api/deployments', { headers: { 'x-user-id': h.users.bob.id }, body: {} })
    expect(unsigned.status).toBe(401)
    expect(await unsigned.json()).toMatchObject({ code: 'SIGNATURE_REQUIRED' })

    // alice is at her solo limit: deploying as alice while naming bob must not create bob's agent.
    const headers = await signedIdentityHeaders(INTERNAL_KEY, { userId: h.users.alice.id, email: h.users.alice.email })
    const res = await backendCall(h.backend, 'POST', '/api/deployments', { headers, body: { userId: h.users.bob.id } })
    expect(res.status).toBe(429)
    expect(await res.json()).toMatchObject({ code: 'AGENT_LIMIT', plan: 'solo' })
    const bobs = (await (await call(h, 'GET', '/api/agents', { user: h.users.bob })).json()) as { agents: AgentJson[] }
    expect(bobs.agents).toEqual([])
  })
})

describe('agents: rate limits per client address (spec "Limits"), and per user in addition', () => {
  const newUser = async () => {
    const tag = crypto.randomUUID().slice(0, 8)
    const user = await h.seedUser(`L ${tag}`, `l-${tag}@example.com`)
    await setPlan(h.db, user.id, 'solo', `sub_${tag}`)
    return user
  }

  it('provision: 5 a minute from one address, whoever signs in there; the sixth is 429 before its body is read', async () => {
    await withinOneWindow(60)
    const ip = { 'cf-connecting-ip': freshIp() }
    const users = [await newUser(), await newUser(), await newUser()]
    // Malformed bodies: refused after the limiter (400), nothing is made.
    for (let i = 0; i < 5; i++) expect((await call(h, 'POST', '/api/provision', { user: users[i % 3], body: '{nope', headers: ip })).status).toBe(400)
    const refused = await call(h, 'POST', '/api/provision', { user: users[2], body: '{nope', headers: ip })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(refused.headers.get('ratelimit-limit')).toBe('5')
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    // Another address is not affected, even for the same user (their own counter has 2 of 5 used).
    expect((await call(h, 'POST', '/api/provision', { user: users[2], body: '{nope', headers: { 'cf-connecting-ip': freshIp() } })).status).toBe(400)
  })

  it('provision: 5 a minute per user too, however many addresses the user moves between', async () => {
    await withinOneWindow(60)
    const user = await newUser()
    for (let i = 0; i < 5; i++) expect((await call(h, 'POST', '/api/provision', { user, body: '{nope', headers: { 'cf-connecting-ip': freshIp() } })).status).toBe(400)
    const refused = await call(h, 'POST', '/api/provision', { user, body: '{nope', headers: { 'cf-connecting-ip': freshIp() } })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    // Another user from a new address provisions as usual.
    expect((await call(h, 'POST', '/api/provision', { user: await newUser(), body: '{nope', headers: { 'cf-connecting-ip': freshIp() } })).status).toBe(400)
  })

  it('/api/agents: 100 a minute from one address across users; the headers show the tighter of the two counters', async () => {
    await withinOneWindow(60, 20_000)
    const ip = { 'cf-connecting-ip': freshIp() }
    const [a, b] = [await newUser(), await newUser()]
    for (let i = 1; i <= 100; i++) {
      const res = await call(h, 'GET', '/api/agents', { user: i % 2 ? a : b, headers: ip })
      expect(res.status, `request ${i}`).toBe(200)
      // The address has 100 - i left; each user more: the address's count is the one shown.
      expect(res.headers.get('ratelimit-remaining'), `request ${i}`).toBe(String(100 - i))
      await res.body?.cancel()
    }
    const refused = await call(h, 'GET', '/api/agents', { user: await newUser(), headers: ip })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    // a's own counter (50 used) still lets a through from another address.
    const elsewhere = await call(h, 'GET', '/api/agents', { user: a, headers: { 'cf-connecting-ip': freshIp() } })
    expect(elsewhere.status).toBe(200)
    expect(elsewhere.headers.get('ratelimit-remaining')).toBe('49')
  })

  it('/api/agents: 100 a minute per user across addresses', async () => {
    await withinOneWindow(60, 20_000)
    const user = await newUser()
    for (let i = 1; i <= 100; i++) {
      const res = await call(h, 'GET', '/api/agents', { user, headers: { 'cf-connecting-ip': freshIp() } })
      expect(res.status, `request ${i}`).toBe(200)
      expect(res.headers.get('ratelimit-remaining')).toBe(String(100 - i))
      await res.body?.cancel()
    }
    const refused = await call(h, 'GET', '/api/agents', { user, headers: { 'cf-connecting-ip': freshIp() } })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBeTruthy()
  })
})
