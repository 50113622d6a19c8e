import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Agent } from '../../../schema'
import { durableBackend, type DurableNamespaceLike, LOG_TAILS_BINDING, TARGET_HEADER } from '../../../lib/logs/backend'
import { LogTailObject } from '../../../functions/logs/durable'
import { logTails } from '../../../lib/logs/tail'
import { useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { active, closeAllStreams, connect, eventually, history, provisionedAgent, touchRuntime } from './helpers'

let agent: Agent
const h = useHarness()
beforeAll(async () => {
  logTails(h.services.runtimes).options.graceMs = 200
  agent = await provisionedAgent(h, h.users.alice, 'logs-security')
})
afterAll(() => closeAllStreams())

describe('live log tail: sessions and ownership', () => {
  it('every route → 401 without a session or with an unknown one', async () => {
    const routes = [
      ['GET', `/api/logs/${agent.id}/stream`],
      ['GET', `/api/logs/${agent.id}/history`],
      ['POST', `/api/logs/${agent.id}/stop`],
      ['GET', '/api/logs/active'],
    ] as const
    for (const [method, path] of routes) {
      for (const headers of [{}, { cookie: 'service-session=forged' }] as Record<string, string>[]) {
        const res = await call(h, method, path, { headers })
        expect(res.status, `${method} ${path}`).toBe(401)
        expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
      }
    }
    expect(await active(h, h.users.alice)).toEqual([]) // no tail was started
  })

  it('another user’s agent → 404 `Agent not found` (as if missing); their tail is neither listed, read nor stopped', async () => {
    const alice = await connect(h, h.users.alice, agent.id)
    await alice.next((e) => e.type === 'connected')
    const path = `/secret-${crypto.randomUUID()}`
    await touchRuntime(agent.runtimeUrl!, path)
    await alice.next((e) => e.text.includes(path))

    for (const [method, op] of [['GET', 'stream'], ['GET', 'history'], ['POST', 'stop']] as const) {
      const res = await call(h, method, `/api/logs/${agent.id}/${op}`, { user: h.users.bob })
      expect(res.status, op).toBe(404)
      const body = await res.text()
      expect(JSON.parse(body)).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
      expect(body).not.toContain(path)
    }
    expect(await active(h, h.users.bob)).toEqual([])
    expect(await active(h, h.users.alice)).toEqual([expect.objectContaining({ agentId: agent.id, clients: 1 })])
    // alice's stream is untouched: still live, a new line arrives
    const after = `/after-${crypto.randomUUID()}`
    await touchRuntime(agent.runtimeUrl!, after)
    await alice.next((e) => e.text.includes(after))
    expect(alice.events.some((e) => e.type === 'exit')).toBe(false)
    await alice.close()
  })

  it('stop from a foreign Origin → 403, the tail keeps running', async () => {
    const client = await connect(h, h.users.alice, agent.id)
    await client.next((e) => e.type === 'connected')
    const res = await call(h, 'POST', `/api/logs/${agent.id}/stop`, { user: h.users.alice, headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' })
    expect((await history(h, h.users.alice, agent.id)).active).toBe(true)
    await client.close()
  })

  it('the Durable Object path: with a LOG_TAILS binding the routes forward to one object per user, after the same checks', async () => {
    await eventually(() => active(h, h.users.alice), (t) => t.length === 0, 3000)
    // One LogTailObject per name (the user's), as workerd's namespace gives, running on this harness's local provider.
    const objects = new Map<string, LogTailObject>()
    const seen: Request[] = []
    const ns: DurableNamespaceLike = {
      idFromName: (name) => name,
      get: (id) => ({
        fetch: async (input, init) => {
          const req = new Request(input, init)
          seen.push(req.clone())
          let obj = objects.get(id as string)
          if (!obj) objects.set(id as string, (obj = new LogTailObject({}, {}, h.services.runtimes)))
          return obj.fetch(req)
        },
      }),
    }
    const env = { [LOG_TAILS_BINDING]: ns }
    const cookie = { cookie: h.users.alice.cookie }

    // bob is refused before anything is forwarded
    const bob = await h.web.request(`/api/logs/${agent.id}/history`, { headers: { cookie: h.users.bob.cookie } }, env)
    expect(bob.status).toBe(404)
    expect(seen).toHaveLength(0)

    const client = await connect(h, h.users.alice, agent.id, env)
    await client.next((e) => e.type === 'connected')
    const path = `/durable-${crypto.randomUUID()}`
    await touchRuntime(agent.runtimeUrl!, path)
    await client.next((e) => e.text.includes(path))
    // the target reaches the object without the gateway token
    const target = JSON.parse(seen[0].headers.get(TARGET_HEADER)!)
    expect(target).toMatchObject({ agentId: agent.id, gatewayToken: null })
    expect(objects.size).toBe(1)
    // the in-process registry was not used
    expect(logTails(h.services.runtimes).get(agent.id)).toBeNull()

    const hist = await (await h.web.request(`/api/logs/${agent.id}/history`, { headers: cookie }, env)).json()
    expect(hist).toMatchObject({ agentId: agent.id, active: true })
    expect(hist.lines.some((l: { text: string }) => l.text.includes(path))).toBe(true)
    const act = await (await h.web.request('/api/logs/active', { headers: cookie }, env)).json()
    expect(act.tails).toEqual([expect.objectContaining({ agentId: agent.id, clients: 1 })])
    const stop = await h.web.request(`/api/logs/${agent.id}/stop`, { method: 'POST', headers: { ...cookie, origin: 'http://localhost:3000' } }, env)
    expect(await stop.json()).toEqual({ agentId: agent.id, stopped: true })
    expect(await client.next((e) => e.type === 'exit')).toMatchObject({ code: 0, text: 'Log tail stopped' })
    await client.closed
    expect(await durableBackend(ns).active(h.users.alice.id, [agent.id])).toEqual([])
  })

  it('the Durable Object refuses a request without a well-formed target', async () => {
    const obj = new LogTailObject({}, {}, h.services.runtimes)
    for (const header of [undefined, 'not json', JSON.stringify({ agentId: 'other', name: 'x' })]) {
      const res = await obj.fetch(new Request(`https://log-tail.internal/${agent.id}/stream`, { headers: header ? { [TARGET_HEADER]: header } : {} }))
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error: 'Invalid log tail target', code: 'VALIDATION' })
    }
  })
})
