import { eq } from 'drizzle-orm'
import { afterAll, describe, expect, it } from 'vitest'
import { agents } from '../../../schema'
import { insertApiKey } from '../../auth/helpers'
import type { Harness } from '../../support/harness'
import { call } from '../../support/requests'
import { chat, chatHarness, chatRuntime, chatUser, closeRuntimes, deliver, echo, jobRow, seedChatAgent, seedJob, slots } from './helpers'
import { useFixture } from '../../support/harness'
import { waitFor } from '../../support/wait'

const h = useFixture(() => chatHarness())
afterAll(() => closeRuntimes())

const finished = async (jobId: string) => ['succeeded', 'failed'].includes((await jobRow(h, jobId)).status)

describe('POST /api/gateway/chat → the queue → the runtime → GET /api/jobs/:jobId', () => {
  it('queues the message (202), the queue delivers it for real, the job ends succeeded with the reply', async () => {
    const { user, runtime, agent } = await chatUser(h, echo('hello agent'))
    const res = await chat(h, user, { message: '  hello agent  ' })
    expect(res.status).toBe(202)
    const body = await res.json()
    expect(body).toEqual({ success: true, queued: true, jobId: expect.any(String), status: 'queued', agentId: agent.id, agentName: agent.name })
    expect(res.headers.get('ratelimit-limit')).toBe('60')

    await waitFor(() => finished(body.jobId))
    // The runtime got the trimmed text, the dashboard session and the job id to dedupe on.
    expect(runtime.bodies.get('/api/gateway/chat')!.map((b) => JSON.parse(b))).toEqual([{ text: 'hello agent', sessionId: 'dashboard', deliveryId: body.jobId }])

    const polled = await call(h, 'GET', `/api/jobs/${body.jobId}`, { user })
    expect(polled.status).toBe(200)
    const job = await polled.json()
    expect(job).toEqual({
      jobId: body.jobId,
      status: 'succeeded',
      attempts: 1,
      result: { sessionId: 'dashboard', reply: 'Echo: hello agent' },
      error: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    expect(Date.parse(job.updatedAt)).toBeGreaterThanOrEqual(Date.parse(job.createdAt))
    // The job ended: its ticket is back.
    expect(await slots(h, user.id)).toMatchObject({ user: 0 })
    expect((await jobRow(h, body.jobId)).weight).toBe(1)
  })

  it('a message over 800 characters weighs 2 slots while it runs, then gives both back', async () => {
    const { user } = await chatUser(h, { ...echo(), delayMs: 400 })
    const res = await chat(h, user, { message: 'x'.repeat(801) })
    expect(res.status).toBe(202)
    const { jobId } = await res.json()
    expect((await jobRow(h, jobId)).weight).toBe(2)
    expect((await slots(h, user.id)).user).toBe(2)
    await waitFor(() => finished(jobId))
    expect((await slots(h, user.id)).user).toBe(0)
    // Exactly 800 weighs 1.
    const short = await chat(h, user, { message: 'y'.repeat(800) })
    expect((await jobRow(h, (await short.json()).jobId)).weight).toBe(1)
  })

  it('goes to a running agent before a newer one that is not, the newest running first; templates and unprovisioned agents never', async () => {
    const user = await h.seedUser('Picky', `picky-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const f = await chatRuntime()
    const older = await seedChatAgent(h, user, f.url, { createdAt: new Date('2026-01-01T00:00:00Z') })
    const newer = await seedChatAgent(h, user, f.url, { createdAt: new Date('2026-02-01T00:00:00Z') })
    await seedChatAgent(h, user, f.url, { status: 'stopped', createdAt: new Date('2026-03-01T00:00:00Z') })
    await seedChatAgent(h, user, f.url, { status: 'template', createdAt: new Date('2026-04-01T00:00:00Z') })
    await seedChatAgent(h, user, null, { runtimeServiceId: null, createdAt: new Date('2026-05-01T00:00:00Z') })
    const res = await chat(h, user, { message: 'which one?' })
    expect((await res.json()).agentId).toBe(newer.id)
    expect(older.id).not.toBe(newer.id)
  })

  it('a failed delivery is retried by the queue with the same delivery id, and then succeeds', async () => {
    const { user, runtime } = await chatUser(h, [{ status: 500, body: { error: 'boom' } }, echo('again')])
    const { jobId } = await (await chat(h, user, { message: 'again' })).json()
    await waitFor(async () => (await jobRow(h, jobId)).status === 'succeeded', { ms: 15_000 })
    const job = await jobRow(h, jobId)
    expect(job).toMatchObject({ attempts: 2, error: null, result: { sessionId: 'dashboard', reply: 'Echo: again' } })
    const sent = runtime.bodies.get('/api/gateway/chat')!.map((b) => JSON.parse(b).deliveryId)
    expect(sent).toEqual([jobId, jobId])
    expect((await slots(h, user.id)).user).toBe(0)
  })
})

describe('the queue receiver', () => {
  it('a redelivery of a finished job is a no-op: no runtime call, nothing changed', async () => {
    const { user, runtime } = await chatUser(h)
    const { jobId } = await (await chat(h, user, { message: 'once' })).json()
    await waitFor(() => finished(jobId))
    const before = await jobRow(h, jobId)
    const res = await deliver(h, jobId, 1)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, jobId, status: 'succeeded', delivered: false })
    expect(runtime.hits.get('/api/gateway/chat')).toBe(1)
    expect(await jobRow(h, jobId)).toEqual(before)
  })

  it('a job whose agent was suspended since it was queued fails without calling the runtime, and a new chat is 409', async () => {
    const { user, agent, runtime } = await chatUser(h)
    const job = await seedJob(h, user, agent, { message: 'too late' })
    await h.db.update(agents).set({ status: 'suspended' }).where(eq(agents.id, agent.id))
    const res = await deliver(h, job.id)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, jobId: job.id, status: 'failed', delivered: false })
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'failed', error: 'Agent suspended' })
    expect(runtime.hits.get('/api/gateway/chat')).toBeUndefined()
    const refused = await chat(h, user, { message: 'anyone?' })
    expect(refused.status).toBe(409)
    expect(await refused.json()).toEqual({ error: 'Agent suspended: start it again', code: 'INVALID_TRANSITION' })
  })

  it('below the last attempt a failure answers 502 and leaves the job queued with its error; the last marks it failed', async () => {
    const { user, agent, runtime } = await chatUser(h, { status: 503, body: { error: 'down' } })
    const job = await seedJob(h, user, agent, { message: 'doomed' })
    for (const retried of [0, 1, 2]) {
      const res = await deliver(h, job.id, retried)
      expect(res.status).toBe(502)
      expect(await res.json()).toEqual({ error: 'Runtime unavailable', code: 'RUNTIME_UNAVAILABLE' })
      expect(await jobRow(h, job.id)).toMatchObject({ status: 'queued', attempts: retried + 1, error: 'Runtime answered 503' })
    }
    const last = await deliver(h, job.id, 3)
    expect(last.status).toBe(200)
    expect(await last.json()).toEqual({ ok: true, jobId: job.id, status: 'failed', delivered: true })
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'failed', attempts: 4, error: 'Runtime answered 503', result: null })
    expect(runtime.hits.get('/api/gateway/chat')).toBe(4)
    const polled = await (await call(h, 'GET', `/api/jobs/${job.id}`, { user })).json()
    expect(polled).toMatchObject({ status: 'failed', attempts: 4, error: 'Runtime answered 503', result: null })
  })

  it('the last failed attempt gives the ticket back', async () => {
    const { user } = await chatUser(h, { status: 500 })
    const { jobId } = await (await chat(h, user, { message: 'fails' })).json()
    expect((await slots(h, user.id)).user).toBe(1)
    // Deliveries 2-4 as the queue would send them (its own retries wait seconds).
    await waitFor(async () => (await jobRow(h, jobId)).attempts >= 1)
    await deliver(h, jobId, 3)
    expect(await jobRow(h, jobId)).toMatchObject({ status: 'failed' })
    expect((await slots(h, user.id)).user).toBe(0)
  })

  it('an agent without a runtime gateway fails the job at once (no retry can mend it)', async () => {
    const user = await h.seedUser('NoUrl', `nourl-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const agent = await seedChatAgent(h, user, null)
    const job = await seedJob(h, user, agent)
    const res = await deliver(h, job.id, 0)
    expect(await res.json()).toEqual({ ok: true, jobId: job.id, status: 'failed', delivered: true })
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'failed', attempts: 1, error: 'The agent has no runtime gateway' })
  })
})

describe('POST /api/jobs/:jobId/claim', () => {
  it('claims with the session: the job and its claimer; a claimed job is not delivered, and keeps its status', async () => {
    const { user, agent, runtime } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const res = await call(h, 'POST', `/api/jobs/${job.id}/claim`, { user, body: { claimerAgentId: agent.id } })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toEqual({
      jobId: job.id,
      status: 'queued',
      attempts: 0,
      result: null,
      error: null,
      createdAt: job.createdAt.toISOString(),
      updatedAt: expect.any(String),
      claimedByAgentId: agent.id,
      claimedAt: expect.any(String),
    })
    expect(Date.now() - Date.parse(body.claimedAt)).toBeLessThan(10_000)
    expect(await (await deliver(h, job.id)).json()).toEqual({ ok: true, jobId: job.id, status: 'queued', delivered: false })
    expect(runtime.hits.get('/api/gateway/chat')).toBeUndefined()
  })

  it('claims with an API key (no session), and gives the job’s workload slots back', async () => {
    // The runtime takes a second, so the job is still running when it is claimed.
    const { user, agent } = await chatUser(h, { ...echo(), delayMs: 1000 })
    const { jobId } = await (await chat(h, user, { message: 'y'.repeat(900) })).json()
    expect((await slots(h, user.id)).user).toBe(2)
    const { key } = await insertApiKey(h.db, user.id)
    const res = await h.web.request(`/api/jobs/${jobId}/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ claimerAgentId: agent.id }),
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ jobId, claimedByAgentId: agent.id })
    expect((await slots(h, user.id)).user).toBe(0)
    // The delivery under way still stores its reply.
    await waitFor(() => finished(jobId))
    expect(await jobRow(h, jobId)).toMatchObject({ status: 'succeeded', claimedByAgentId: agent.id })
  })

  it('20 concurrent claims by 20 agents: exactly one wins, 19 get 409 ALREADY_CLAIMED', async () => {
    const { user, agent } = await chatUser(h)
    const f = await chatRuntime()
    const claimers = [agent, ...(await Promise.all(Array.from({ length: 19 }, () => seedChatAgent(h, user, f.url))))]
    const job = await seedJob(h, user, agent)
    const answers = await Promise.all(claimers.map((a) => call(h, 'POST', `/api/jobs/${job.id}/claim`, { user, body: { claimerAgentId: a.id } })))
    const won = answers.filter((r) => r.status === 200)
    expect(won).toHaveLength(1)
    const lost = answers.filter((r) => r.status === 409)
    expect(lost).toHaveLength(19)
    for (const r of lost) expect(await r.json()).toEqual({ error: 'Job already claimed', code: 'ALREADY_CLAIMED' })
    const winner = (await won[0].json()).claimedByAgentId
    expect((await jobRow(h, job.id)).claimedByAgentId).toBe(winner)
  })
})

describe('GET /api/gateway/status', () => {
  it('reads the agent’s gateway: healthy, sessions (10 most recent of 12, active in the last hour), cron jobs', async () => {
    const now = Date.now()
    const sessions = Array.from({ length: 12 }, (_, i) => ({
      id: `s${i}`,
      channel: i % 2 ? 'telegram' : 'webchat',
      lastActive: new Date(now - i * 19 * 60_000).toISOString(), // every 19 minutes back: s0..s3 within the hour
      messages: i,
    }))
    const jobs = [
      { id: 'heartbeat', name: 'Heartbeat', enabled: true, frequency: '1h', nextRun: '2026-03-02T11:00:00.000Z', lastRun: '2026-03-02T10:00:00.000Z' },
      { id: 'digest', name: 'Digest', enabled: false, frequency: '12h', nextRun: null, lastRun: null },
    ]
    const user = await h.seedUser('Status', `status-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const f = await chatRuntime(echo(), { '/api/gateway/sessions': { body: { sessions: [...sessions].reverse() } }, '/api/gateway/cron': { body: { jobs } } })
    await seedChatAgent(h, user, f.url)
    const res = await call(h, 'GET', '/api/gateway/status', { user })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.health).toBe('healthy')
    expect(body.healthDetail).toEqual({ ok: true, status: 200 })
    expect(body.sessions.total).toBe(12)
    expect(body.sessions.active).toBe(4)
    expect(body.sessions.list.map((s: { id: string }) => s.id)).toEqual(['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9'])
    expect(body.sessions.list[1]).toEqual({ id: 's1', channel: 'telegram', lastActive: sessions[1].lastActive, messages: 1 })
    expect(body.cron).toEqual({
      total: 2,
      enabled: 1,
      jobs: [
        { id: 'heartbeat', name: 'Heartbeat', enabled: true, schedule: '1h', lastRun: '2026-03-02T10:00:00.000Z', nextRun: '2026-03-02T11:00:00.000Z' },
        { id: 'digest', name: 'Digest', enabled: false, schedule: '12h', lastRun: null, nextRun: null },
      ],
    })
  })

  it('entries of the runtime’s lists that are not objects (null, a number, a string, a list) are left out, not a 500', async () => {
    const user = await h.seedUser('Odd', `odd-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const session = { id: 's0', channel: 'webchat', lastActive: new Date().toISOString(), messages: 2 }
    const job = { id: 'heartbeat', name: 'Heartbeat', enabled: true, frequency: '1h', nextRun: null, lastRun: null }
    const junk = [null, 7, 'x', []]
    const f = await chatRuntime(echo(), { '/api/gateway/sessions': { body: { sessions: [...junk, session] } }, '/api/gateway/cron': { body: { jobs: [...junk, job] } } })
    await seedChatAgent(h, user, f.url)
    const res = await call(h, 'GET', '/api/gateway/status', { user })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.sessions).toEqual({ total: 1, active: 1, list: [session] })
    expect(body.cron).toMatchObject({ total: 1, enabled: 1, jobs: [{ id: 'heartbeat' }] })
  })

  it('an unreachable runtime is 200 unreachable with its error and empty lists; a failing cron read alone empties cron', async () => {
    const user = await h.seedUser('Down', `down-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const f = await chatRuntime(echo(), { '/api/gateway/sessions': { status: 500 } })
    await seedChatAgent(h, user, f.url)
    const res = await call(h, 'GET', '/api/gateway/status', { user })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      health: 'unreachable',
      healthDetail: { ok: false, error: 'Runtime answered 500' },
      sessions: { total: 0, active: 0, list: [] },
      cron: { total: 0, enabled: 0, jobs: [] },
    })
    f.set('/api/gateway/sessions', { body: { sessions: [] } })
    const partly = await (await call(h, 'GET', '/api/gateway/status', { user })).json()
    expect(partly).toMatchObject({ health: 'healthy', cron: { total: 0, enabled: 0, jobs: [] } })
  })
})
