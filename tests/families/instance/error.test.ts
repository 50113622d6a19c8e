import { afterAll, describe, expect, it } from 'vitest'
import { setPlan } from '../../auth/helpers'
import { createHarness, PAYING, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { closeFakes, fake, PROBES, seedAgent } from './helpers'

const h = useHarness({ plan: PAYING })
const paused = useHarness({ env: { PROVISIONING_ENABLED: '1', PROVISIONING_KILL_SWITCH: '1' } })
afterAll(() => closeFakes())

describe('instance: errors', () => {
  it('no agent yet: 404 `No instance found. Please deploy first.` on the instance routes', async () => {
    const u = h.users.alice
    for (const path of [`/api/instance/${u.id}`, `/api/instance/${u.id}/stats`]) {
      const res = await call(h, 'GET', path, { user: u })
      expect(res.status, path).toBe(404)
      expect(await res.json()).toEqual({ error: 'No instance found. Please deploy first.', code: 'NOT_FOUND' })
    }
    const stop = await call(h, 'POST', `/api/instance/${u.id}/stop`, { user: u })
    expect(stop.status).toBe(404)
    const maint = await call(h, 'POST', '/api/runtime/maintenance', { user: u, body: { action: 'repair' } })
    expect(maint.status).toBe(404)
  })

  it('start without an agent: 500 when provisioning is disabled, 503 under the kill switch, 403 without a paid plan', async () => {
    const disabled = await call(h, 'POST', `/api/instance/${h.users.alice.id}/start`, { user: h.users.alice })
    expect(disabled.status).toBe(500)
    expect((await disabled.json()).code).toBe('PROVISIONING_DISABLED')
    const killed = await call(paused, 'POST', `/api/instance/${paused.users.alice.id}/start`, { user: paused.users.alice })
    expect(killed.status).toBe(503)
    expect((await killed.json()).code).toBe('PROVISIONING_PAUSED')
    const on = await createHarness({ env: { PROVISIONING_ENABLED: '1' } })
    try {
      const unpaid = await call(on, 'POST', `/api/instance/${on.users.bob.id}/start`, { user: on.users.bob })
      expect(unpaid.status).toBe(403)
      expect(await unpaid.json()).toEqual({ error: 'Active subscription required', code: 'SUBSCRIPTION_REQUIRED' })
      await setPlan(on.db, on.users.bob.id, 'solo', 'sub_x', { status: 'canceled' })
      expect((await call(on, 'POST', `/api/instance/${on.users.bob.id}/start`, { user: on.users.bob })).status).toBe(403)
    } finally {
      await on.close()
    }
  })

  it('maintenance: unknown or missing action 400 INVALID_ACTION; invalid JSON 400', async () => {
    const u = h.users.bob
    for (const body of [{ action: 'explode' }, {}]) {
      const res = await call(h, 'POST', '/api/runtime/maintenance', { user: u, body })
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'Invalid action', code: 'INVALID_ACTION' })
    }
    expect((await call(h, 'POST', '/api/runtime/maintenance', { user: u, body: '{"action":' })).status).toBe(400)
  })

  it('a factory reset whose memory reset the runtime refuses: 502, nothing redeployed', async () => {
    const u = await h.seedUser('Gone', `gone-${crypto.randomUUID()}@example.com`)
    const f = await fake(PROBES.running)
    await seedAgent(h, u, { runtimeUrl: f.url })
    // the runtime answers its probes but its gateway refuses the memory reset (404 from the fake)
    const res = await call(h, 'POST', `/api/instance/${u.id}/factory-reset`, { user: u })
    expect(res.status).toBe(502)
    expect((await res.json()).code).toBe('RUNTIME_UNAVAILABLE')
  })

  it('debug: missing fields, a command outside the allowlist, invalid JSON: 400; an unreachable runtime: 502', async () => {
    const u = await h.seedUser('Dbg', `dbg-${crypto.randomUUID()}@example.com`)
    const f = await fake({ '/api/gateway/diagnostics': { status: 500 } })
    const a = await seedAgent(h, u, { runtimeUrl: f.url })
    const cases: Array<[unknown, string]> = [
      [{ agentId: a.id }, 'command and agentId are required'],
      [{ command: 'runtime.version' }, 'command and agentId are required'],
      [{ command: 'rm -rf /', agentId: a.id }, 'Command not allowed'],
      [{ command: 'runtime.shell', agentId: a.id }, 'Command not allowed'],
    ]
    for (const [body, error] of cases) {
      const res = await call(h, 'POST', '/api/debug', { user: u, body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect((await res.json()).error).toBe(error)
    }
    const bad = await call(h, 'POST', '/api/debug', { user: u, body: '{not json' })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toBe('Invalid JSON body')
    expect(f.hits.get('/api/gateway/diagnostics')).toBeUndefined()
    const down = await call(h, 'POST', '/api/debug', { user: u, body: { command: 'runtime.status', agentId: a.id } })
    expect(down.status).toBe(502)
  })

  it('heartbeat: a frequency outside the six, DELETE without agentId: 400', async () => {
    const u = h.users.bob
    const res = await call(h, 'PUT', '/api/heartbeat', { user: u, body: { frequency: '5m', agentId: 'x' } })
    expect(res.status).toBe(400)
    expect((await res.json()).code).toBe('VALIDATION')
    const del = await call(h, 'DELETE', '/api/heartbeat', { user: u, body: {} })
    expect(del.status).toBe(400)
    expect((await del.json()).error).toBe('agentId required')
  })

  it('dashboard check is 200 with the gateway unknown without a session', async () => {
    const res = await call(h, 'GET', '/api/debug/dashboard-check')
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ok', checks: { database: 'ok', gateway: 'unknown', auth: 'ok' } })
  })
})
