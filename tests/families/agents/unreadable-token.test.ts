import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { GATEWAY_TOKEN_PURPOSE } from '../../../lib/agents/access'
import type { AgentJson } from '../../../lib/agents/lifecycle'
import type { Config } from '../../../lib/config'
import { seal } from '../../../lib/secret-box'
import { agentEvents, agents } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import { useHarness } from '../../support/harness'
import { backendCall, call } from '../../support/requests'
import { AGENTS_ENV, answers, provision, SHARED, storedAgent, waitRunning } from './helpers'

/**
 * Finding 12: an agent's gateway token sealed under a key this server no longer has (its keys changed, or a local
 * server's secret was lost). Every route that needs the token gives a clear answer and does nothing (409
 * `SECRET_UNREADABLE`, never 500); stop and delete work without it; repair gives the agent a new token, which the
 * real local runtime then takes.
 */
let agent: AgentJson
const h = useHarness({ env: AGENTS_ENV })
beforeAll(async () => {
  await setPlan(h.db, h.users.alice.id, 'solo', 'sub_alice')
  agent = await provision(h, h.users.alice, { name: 'keyless' })
  await waitRunning(h, h.users.alice, agent.id)
})

const alice = () => h.users.alice

/** Makes the stored token unreadable: sealed under another key of the same id, an unknown key id, or corrupted. */
async function breakToken(how: 'other-key' | 'unknown-key' | 'corrupted') {
  const row = await storedAgent(h, agent.id)
  let set: { gatewayToken: string; gatewayTokenKeyId: string }
  if (how === 'other-key') {
    // What a restart with a new random SESSION_SECRET did: the same key id (`session`), another key.
    const other = { ...h.services.config, sessionSecret: 'the-previous-process-secret' } as Config
    const sealed = await seal(other, 'a'.repeat(64), row.userId, GATEWAY_TOKEN_PURPOSE)
    expect(sealed.keyId).toBe('session')
    set = { gatewayToken: sealed.sealed, gatewayTokenKeyId: sealed.keyId }
  } else if (how === 'unknown-key') set = { gatewayToken: row.gatewayToken!, gatewayTokenKeyId: 'retired-key' }
  else set = { gatewayToken: 'not base64 at all!', gatewayTokenKeyId: row.gatewayTokenKeyId! }
  await h.db.update(agents).set(set).where(eq(agents.id, agent.id))
}

const UNREADABLE = { code: 'SECRET_UNREADABLE', error: expect.stringMatching(/gateway token cannot be read.*repair the agent.*or delete it/) }

async function expect409(res: Response) {
  const body = await res.json()
  expect(res.status, JSON.stringify(body)).toBe(409)
  expect(body).toMatchObject(UNREADABLE)
}

const eventCount = async () => (await h.db.select().from(agentEvents).where(eq(agentEvents.agentId, agent.id))).length

describe('an agent whose gateway token this server cannot open', () => {
  it('the token route: 409 SECRET_UNREADABLE for another key, an unknown key id and a corrupted value; never 500', async () => {
    for (const how of ['other-key', 'unknown-key', 'corrupted'] as const) {
      await breakToken(how)
      await expect409(await call(h, 'GET', `/api/agents/${agent.id}/token`, { user: alice() }))
    }
  })

  it('every route that needs the token answers 409 and does nothing: the runtime keeps running, the record is unchanged', async () => {
    await breakToken('other-key')
    const before = await storedAgent(h, agent.id)
    const events = await eventCount()
    const userId = alice().id
    for (const [method, path, body] of [
      ['POST', `/api/agents/${agent.id}/start`],
      ['POST', `/api/agents/${agent.id}/restart`],
      ['POST', `/api/agents/${agent.id}/reset-memory`],
      ['POST', `/api/agents/${agent.id}/update`, {}],
      ['POST', `/api/agents/${agent.id}/sync`],
      ['POST', '/api/debug', { command: 'runtime.version', agentId: agent.id }],
      ['POST', `/api/instance/${userId}/restart`],
      ['POST', `/api/instance/${userId}/factory-reset`],
      ['POST', '/api/runtime/maintenance', { action: 'update', agentId: agent.id }],
    ] as const) {
      await expect409(await call(h, method, path, { user: alice(), body }))
    }
    // The backend's shared-key lifecycle too.
    await expect409(await backendCall(h.backend, 'POST', `/api/agents/${agent.id}/restart`, { headers: SHARED }))

    const after = await storedAgent(h, agent.id)
    expect({ status: after.status, statusReason: after.statusReason, image: after.image, gatewayToken: after.gatewayToken }).toEqual({
      status: before.status,
      statusReason: before.statusReason,
      image: before.image,
      gatewayToken: before.gatewayToken,
    })
    expect(await eventCount()).toBe(events)
    expect(await answers(agent.url!)).toBe(true)
  })

  it('reads report it rather than fail: messages unavailable with the reason, gateway status unreachable, diagnostics token missing', async () => {
    await breakToken('unknown-key')
    const messages = await call(h, 'GET', `/api/agents/${agent.id}/messages`, { user: alice() })
    expect(messages.status).toBe(200)
    expect(await messages.json()).toMatchObject({ source: 'unavailable', sessions: [], error: expect.stringMatching(/gateway token cannot be read/) })

    const status = await call(h, 'GET', '/api/gateway/status', { user: alice() })
    expect(status.status).toBe(200)
    expect(await status.json()).toMatchObject({ health: 'unreachable', healthDetail: { ok: false, error: expect.stringMatching(/gateway token cannot be read/) } })

    const diagnostics = await call(h, 'GET', '/api/support/diagnostics', { user: alice() })
    expect(diagnostics.status).toBe(200)
    expect(await diagnostics.json()).toMatchObject({ tokenStatus: 'missing' })

    // Its details still read, and say nothing of the token.
    const details = await call(h, 'GET', `/api/agents/${agent.id}`, { user: alice() })
    expect(details.status).toBe(200)
  })

  it('stop works without the token; repair re-keys: a new token, sealed under the current key, that the runtime takes', async () => {
    await breakToken('other-key')
    const stop = await call(h, 'POST', `/api/agents/${agent.id}/stop`, { user: alice() })
    expect(stop.status).toBe(200)
    expect(((await stop.json()) as AgentJson).status).toBe('stopped')
    expect(await answers(agent.url!)).toBe(false)

    const repair = await call(h, 'POST', `/api/agents/${agent.id}/repair`, { user: alice() })
    expect(repair.status).toBe(200)
    expect(await repair.json()).toMatchObject({ status: 'starting', statusReason: 'repaired with a new gateway token' })
    const events = await h.db.select().from(agentEvents).where(eq(agentEvents.agentId, agent.id))
    expect(events.at(-1)).toMatchObject({ fromState: 'stopped', toState: 'starting', reason: 'repaired with a new gateway token' })
    await waitRunning(h, alice(), agent.id)

    const token = await call(h, 'GET', `/api/agents/${agent.id}/token`, { user: alice() })
    expect(token.status).toBe(200)
    const fresh = ((await token.json()) as { token: string }).token
    expect(fresh).toMatch(/^[0-9a-f]{64}$/)
    expect(fresh).not.toBe('a'.repeat(64))
    // The runtime was given the new token: the platform's calls through it work, and so does the owner's own.
    const debug = await call(h, 'POST', '/api/debug', { user: alice(), body: { command: 'runtime.version', agentId: agent.id } })
    expect(debug.status).toBe(200)
    const direct = await fetch(new URL('/api/gateway/sessions', agent.url!), { headers: { authorization: `Bearer ${fresh}` } })
    expect(direct.status).toBe(200)
    await direct.body?.cancel()
    // A repair of an agent whose token opens keeps it.
    expect((await call(h, 'POST', `/api/agents/${agent.id}/repair`, { user: alice() })).status).toBe(200)
    await waitRunning(h, alice(), agent.id)
    expect(((await (await call(h, 'GET', `/api/agents/${agent.id}/token`, { user: alice() })).json()) as { token: string }).token).toBe(fresh)
  })

  it('delete works whatever became of the token: the runtime process ends, then the record goes', async () => {
    await breakToken('corrupted')
    const res = await call(h, 'DELETE', `/api/agents/${agent.id}`, { user: alice() })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true, id: agent.id })
    expect(await storedAgent(h, agent.id)).toBeUndefined()
    expect(await answers(agent.url!)).toBe(false)
  })
})
