import { beforeAll, describe, expect, it } from 'vitest'
import type { AgentJson } from '../../../lib/agents/lifecycle'
import { signedIdentityHeaders } from '../../../lib/auth/identity'
import { setPlan } from '../../auth/helpers'
import { useHarness } from '../../support/harness'
import { backendCall, call } from '../../support/requests'
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
      expect(await res.json()).toEqual({ error: 'Forbidden origin', code: 'ORIGIN_NOT_ALLOWED' })
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
