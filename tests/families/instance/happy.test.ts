import { eq } from 'drizzle-orm'
import { afterAll, describe, expect, it } from 'vitest'
import { provisionAgent } from '../../../lib/agents/provision'
import { probeRuntime } from '../../../lib/runtime/probe'
import { agents } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import { PAYING, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { closeFakes, fake, PROBES, seedAgent } from './helpers'
import { waitFor } from '../../support/wait'

const h = useHarness({ env: { PROVISIONING_ENABLED: '1' }, plan: PAYING })
afterAll(() => closeFakes())

const SESSIONS = {
  sessions: [
    { id: 's1', channel: 'telegram', lastActive: '2026-03-01T10:00:00.000Z', messages: 3 },
    { id: 's2', channel: 'telegram', lastActive: '2026-03-02T10:00:00.000Z', messages: 4 },
    { id: 's3', channel: 'webchat', lastActive: null, messages: 1 },
  ],
}


describe('instance: state from the probe', () => {
  it('GET /api/instance/:userId answers every field of a running runtime', async () => {
    const u = await h.seedUser('Run', `run-${crypto.randomUUID()}@example.com`)
    await setPlan(h.db, u.id, 'collective', 'sub_1')
    const f = await fake(PROBES.running)
    await seedAgent(h, u, { runtimeUrl: f.url, plan: null })
    const res = await call(h, 'GET', `/api/instance/${u.id}`, { user: u })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(
      ['userId', 'status', 'statusReason', 'probeChecks', 'startedAt', 'subdomain', 'url', 'plan', 'runtimeVersion', 'ffmpegAvailable', 'ffmpegVersion', 'provisionedAt', 'lastSeenAt', 'gatewayProcessStatus', 'subscriptionStatus'].sort(),
    )
    expect(body).toMatchObject({
      userId: u.id,
      status: 'running',
      statusReason: null,
      subdomain: '127.0.0.1',
      url: f.url,
      plan: 'collective',
      runtimeVersion: '2.4.0',
      ffmpegAvailable: true,
      ffmpegVersion: '6.1.1',
      provisionedAt: '2026-01-02T03:04:05.000Z',
      gatewayProcessStatus: 'active',
      subscriptionStatus: 'active',
    })
    expect(body.probeChecks.map((p: { path: string; ok: boolean }) => [p.path, p.ok])).toEqual([['/healthz', true], ['/readyz', true], ['/api/status', true]])
    expect(Date.now() - Date.parse(body.startedAt)).toBeGreaterThanOrEqual(59_000)
    expect(Date.now() - Date.parse(body.lastSeenAt)).toBeLessThan(10_000)
  })

  for (const status of ['healthy', 'starting', 'stopped', 'setup', 'unknown', 'unreachable'] as const) {
    it(`a runtime probed ${status} reads ${status}`, async () => {
      const u = await h.seedUser(status, `${status}-${crypto.randomUUID()}@example.com`, { plan: null })
      const f = await fake(PROBES[status])
      await seedAgent(h, u, { runtimeUrl: f.url })
      const res = await call(h, 'GET', `/api/instance/${u.id}`, { user: u })
      const body = await res.json()
      expect(res.status).toBe(200)
      expect(body.status).toBe(status)
      expect(body.plan).toBe('solo')
      expect(body.subscriptionStatus).toBe('inactive')
      if (status === 'healthy') expect(body.statusReason).toBeNull()
      else expect(body.statusReason).toEqual(expect.any(String))
      if (status === 'unreachable') expect(body.runtimeVersion).toBe('unknown')
    })
  }

  it('plan reads free when neither the agent nor the user has one; a template is never the instance', async () => {
    const u = await h.seedUser('Free', `free-${crypto.randomUUID()}@example.com`, { plan: null })
    const f = await fake(PROBES.running)
    await seedAgent(h, u, { runtimeUrl: f.url, plan: null })
    await seedAgent(h, u, { status: 'template', plan: 'label' })
    const body = await (await call(h, 'GET', `/api/instance/${u.id}`, { user: u })).json()
    expect(body.plan).toBe('free')
    expect(body.status).toBe('running')
  })

  it('a second read within the TTL makes no probe; unreachable is never cached', async () => {
    const u = await h.seedUser('Cache', `cache-${crypto.randomUUID()}@example.com`)
    const f = await fake(PROBES.running)
    await seedAgent(h, u, { runtimeUrl: f.url })
    await call(h, 'GET', `/api/instance/${u.id}`, { user: u })
    await call(h, 'GET', `/api/instance/${u.id}/stats`, { user: u })
    expect(f.hits.get('/api/status')).toBe(1)

    const v = await h.seedUser('Down', `down-${crypto.randomUUID()}@example.com`)
    const g = await fake(PROBES.unreachable)
    await seedAgent(h, v, { runtimeUrl: g.url })
    expect((await (await call(h, 'GET', `/api/instance/${v.id}`, { user: v })).json()).status).toBe('unreachable')
    // it comes back: the next read probes again and sees it
    for (const [path, answer] of Object.entries(PROBES.running)) g.set(path, answer)
    expect((await (await call(h, 'GET', `/api/instance/${v.id}`, { user: v })).json()).status).toBe('running')
    expect(g.hits.get('/api/status')).toBe(2)
  })

  it('stats: the spec’s fields from the probe', async () => {
    const u = await h.seedUser('Stats', `stats-${crypto.randomUUID()}@example.com`)
    const f = await fake(PROBES.healthy)
    await seedAgent(h, u, { runtimeUrl: f.url })
    const res = await call(h, 'GET', `/api/instance/${u.id}/stats`, { user: u })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      userId: u.id,
      status: 'running',
      health: 'healthy',
      cpu: '0%',
      memory: '0MB',
      uptime: 'active',
      messages: null,
      errors: null,
      runtimeVersion: '2.4.0',
      statusReason: null,
      probeChecks: expect.any(Array),
      telemetry: { resourceMetricsAvailable: false, lifecycleMetricsAvailable: false, messageMetricsAvailable: false },
    })
  })
})

describe('heartbeat, channels', () => {
  it('GET reads the gateway job first, then the database when the gateway has none', async () => {
    const u = await h.seedUser('Hb', `hb-${crypto.randomUUID()}@example.com`)
    const job = { id: 'heartbeat', name: 'heartbeat', enabled: true, frequency: '2h', nextRun: '2026-03-01T12:00:00.000Z', lastRun: null }
    const f = await fake({ '/api/gateway/cron': { body: { jobs: [job] } } })
    const a = await seedAgent(h, u, { runtimeUrl: f.url, heartbeatEnabled: true, heartbeatFrequency: '6h' })
    expect(await (await call(h, 'GET', `/api/heartbeat?agentId=${a.id}`, { user: u })).json()).toEqual({
      source: 'gateway', enabled: true, frequency: '2h', nextRun: job.nextRun, lastRun: null,
    })
    f.set('/api/gateway/cron', { status: 500 })
    const db = await (await call(h, 'GET', `/api/heartbeat?agentId=${a.id}`, { user: u })).json()
    expect(db).toMatchObject({ source: 'db', enabled: true, frequency: '6h' })
    expect(db.message).toEqual(expect.any(String))
    expect(await (await call(h, 'GET', '/api/heartbeat', { user: u })).json()).toMatchObject({ source: 'db', enabled: false, message: expect.any(String) })
  })

  it('PUT writes the gateway; when it fails the database, which needs agentId; POST is a deprecated alias, DELETE disables', async () => {
    const u = await h.seedUser('HbW', `hbw-${crypto.randomUUID()}@example.com`)
    const f = await fake({ '/api/gateway/cron/heartbeat': { body: { job: { id: 'heartbeat', name: 'heartbeat', enabled: true, frequency: '30m', nextRun: null, lastRun: null } } } })
    const a = await seedAgent(h, u, { runtimeUrl: f.url })
    const put = await call(h, 'PUT', '/api/heartbeat', { user: u, body: { frequency: '30m' } })
    expect(await put.json()).toEqual({ success: true, source: 'gateway', enabled: true, frequency: '30m' })
    expect(f.hits.get('/api/gateway/cron/heartbeat')).toBe(1)

    f.set('/api/gateway/cron/heartbeat', undefined) // the gateway now refuses (404)
    const noId = await call(h, 'PUT', '/api/heartbeat', { user: u, body: { frequency: '12h' } })
    expect(noId.status).toBe(400)
    expect(await noId.json()).toMatchObject({ error: 'agentId required' })
    const post = await call(h, 'POST', '/api/heartbeat', { user: u, body: { agentId: a.id, frequency: '12h' } })
    expect(post.headers.get('deprecation')).toBe('true')
    expect(await post.json()).toEqual({ success: true, source: 'db', enabled: true, frequency: '12h' })
    const [row] = await h.db.select().from(agents).where(eq(agents.id, a.id))
    expect([row.heartbeatEnabled, row.heartbeatFrequency]).toEqual([true, '12h'])

    const del = await call(h, 'DELETE', '/api/heartbeat', { user: u, body: { agentId: a.id } })
    expect(del.headers.get('deprecation')).toBe('true')
    expect(await del.json()).toEqual({ success: true, source: 'db', enabled: false, frequency: '12h' })
  })

  it('channels come from the gateway’s sessions', async () => {
    const u = await h.seedUser('Ch', `ch-${crypto.randomUUID()}@example.com`)
    const f = await fake({ '/api/gateway/sessions': { body: SESSIONS } })
    await seedAgent(h, u, { runtimeUrl: f.url })
    const body = await (await call(h, 'GET', '/api/channels', { user: u })).json()
    expect(body.gatewayHealth).toBe('healthy')
    expect(body.source).toBe('gateway')
    expect(body.channels).toEqual([
      { name: 'Web chat', provider: 'webchat', status: 'connected', lastActive: null, messages: 1 },
      { name: 'Telegram', provider: 'telegram', status: 'connected', lastActive: '2026-03-02T10:00:00.000Z', messages: 7 },
      { name: 'Discord', provider: 'discord', status: 'not-configured', lastActive: null, messages: 0 },
      { name: 'WhatsApp', provider: 'whatsapp', status: 'not-configured', lastActive: null, messages: 0 },
    ])
    f.set('/api/gateway/sessions', { status: 500 })
    const down = await (await call(h, 'GET', '/api/channels', { user: u })).json()
    expect(down.gatewayHealth).toBe('unreachable')
    expect(down.channels[0].status).toBe('unreachable')
  })
})

describe('a real local runtime: debug, lifecycle, diagnostics', () => {
  it('debug runtime.version runs in the runtime; stop, start, maintenance; dashboard check and support diagnostics', async () => {
    const u = h.users.alice
    const agent = await provisionAgent(h.services, { userId: u.id, plan: 'solo', name: 'dbg' })
    // Probed directly: a `starting` answer read through the API would be cached for 10 s.
    const running = () => waitFor(async () => (await probeRuntime(agent.runtimeUrl!)).status === 'running', { ms: 5000, every: 100 })
    await running()
    expect((await (await call(h, 'GET', `/api/instance/${u.id}`, { user: u })).json()).status).toBe('running')

    const dbg = await call(h, 'POST', '/api/debug', { user: u, body: { command: 'runtime.version', agentId: agent.id } })
    expect(dbg.status).toBe(200)
    const out = await dbg.json()
    expect(out).toMatchObject({ command: 'runtime.version', exitCode: 0 })
    expect(out.output.length).toBeGreaterThan(0)
    expect(out.duration).toBeGreaterThanOrEqual(0)
    expect(new Date(out.timestamp).toISOString()).toBe(out.timestamp)

    const check = await (await call(h, 'GET', '/api/debug/dashboard-check', { user: u })).json()
    expect(check).toMatchObject({ status: 'ok', checks: { database: 'ok', gateway: 'ok', auth: 'ok' } })

    await h.db.insert(agents).values({ userId: u.id, name: 'broken', status: 'error', statusReason: 'boom', createdAt: new Date(0) })
    const diag = await (await call(h, 'GET', '/api/support/diagnostics', { user: u })).json()
    expect(diag.tokenStatus).toBe('present')
    expect(diag.gatewayUrl).toBe(agent.runtimeUrl)
    expect(diag.recentErrors).toEqual([expect.objectContaining({ name: 'broken', status: 'error' })])
    expect(diag.serviceHealth.find((s: { name: string }) => s.name === 'gateway').status).toBe('ok')

    const stop = await call(h, 'POST', `/api/instance/${u.id}/stop`, { user: u })
    expect(await stop.json()).toEqual({ success: true, action: 'stop', agentId: agent.id, status: 'stopped', deployed: false })
    expect((await (await call(h, 'GET', `/api/instance/${u.id}`, { user: u })).json()).status).toBe('stopped')
    const start = await call(h, 'POST', `/api/instance/${u.id}/start`, { user: u })
    expect(await start.json()).toMatchObject({ action: 'start', status: 'starting', deployed: false })
    await running()
    const reset = await call(h, 'POST', '/api/runtime/maintenance', { user: u, body: { action: 'reset-memory' } })
    expect(await reset.json()).toMatchObject({ success: true, action: 'reset-memory', agentId: agent.id })
    // The start's health wait recorded the agent running (the instance read above only probes, it records nothing).
    await waitFor(async () => (await h.db.select().from(agents).where(eq(agents.id, agent.id)))[0].status === 'running', { what: 'the started instance stored running' })
  })

  it('start without an agent deploys one on the caller’s plan', async () => {
    const b = h.users.bob
    await setPlan(h.db, b.id, 'solo', 'sub_b')
    const res = await call(h, 'POST', `/api/instance/${b.id}/start`, { user: b })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ success: true, action: 'start', status: 'starting', deployed: true })
    const [row] = await h.db.select().from(agents).where(eq(agents.id, body.agentId))
    expect(row).toMatchObject({ userId: b.id, name: 'Agent', plan: 'solo' })
    expect(row.runtimeUrl).toEqual(expect.any(String))
    // Its runtime (a local process) is recorded running by the health wait within seconds, no read needed.
    await waitFor(async () => (await h.db.select().from(agents).where(eq(agents.id, body.agentId)))[0].status === 'running', { ms: 15_000, what: 'the deployed instance stored running' })
  })
})
