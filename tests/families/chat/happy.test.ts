import { eq } from 'drizzle-orm'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { agents } from '../../../schema'
import { insertApiKey } from '../../auth/helpers'
import type { Harness } from '../../support/harness'
import { call } from '../../support/requests'
import { chat, chatHarness, chatRuntime, chatUser, claim, claimed, closeRuntimes, complete, deliver, echo, failJob, jobRow, LEASE_MS, seedChatAgent, seedJob, slots } from './helpers'
import { useFixture } from '../../support/harness'
import { waitFor } from '../../support/wait'

const h = useFixture(() => chatHarness())
afterAll(() => closeRuntimes())
afterEach(() => vi.useRealTimers())

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
      claimedByAgentId: null,
      leaseExpiresAt: null,
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
  it('claims with the session: the job, its claimer and lease; a claimed job is `running` and not delivered', async () => {
    const { user, agent, runtime } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const res = await call(h, 'POST', `/api/jobs/${job.id}/claim`, { user, body: { claimerAgentId: agent.id } })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toEqual({
      jobId: job.id,
      status: 'running',
      attempts: 0,
      result: null,
      error: null,
      createdAt: job.createdAt.toISOString(),
      updatedAt: expect.any(String),
      claimedByAgentId: agent.id,
      claimedAt: expect.any(String),
      leaseId: expect.any(String),
      leaseExpiresAt: expect.any(String),
    })
    expect(Date.now() - Date.parse(body.claimedAt)).toBeLessThan(10_000)
    // The default lease: CHAT_JOB_LEASE_SEC, 300 s from the claim.
    expect(Date.parse(body.leaseExpiresAt) - Date.parse(body.claimedAt)).toBe(300_000)
    expect(await (await deliver(h, job.id)).json()).toEqual({ ok: true, jobId: job.id, status: 'running', delivered: false })
    expect(runtime.hits.get('/api/gateway/chat')).toBeUndefined()
  })

  it('claims with an API key (no session), and gives the job’s workload slots back', async () => {
    // The runtime takes a second, so the job is still running when it is claimed.
    const { user, agent, runtime } = await chatUser(h, { ...echo(), delayMs: 1000 })
    const { jobId } = await (await chat(h, user, { message: 'y'.repeat(900) })).json()
    expect((await slots(h, user.id)).user).toBe(2)
    // Claimed once the delivery reached the runtime: a claim before it would (rightly) stop the delivery.
    await waitFor(() => runtime.hits.get('/api/gateway/chat') === 1)
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

describe('The job lease: complete, fail, expiry', () => {
  it('the holder completes the job with its result: `succeeded`, shown by GET; the claimer stays, the lease is gone', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const lease = await claimed(h, user, job.id, agent.id)
    const polled = await (await call(h, 'GET', `/api/jobs/${job.id}`, { user })).json()
    expect(polled).toMatchObject({ status: 'running', claimedByAgentId: agent.id, leaseExpiresAt: lease.leaseExpiresAt, result: null })
    expect(polled.leaseId).toBeUndefined()

    const res = await complete(h, user, job.id, { leaseId: lease.leaseId, result: { reply: 'All done', sessionId: 'agent-session' } })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toEqual({
      jobId: job.id,
      status: 'succeeded',
      attempts: 0,
      result: { sessionId: 'agent-session', reply: 'All done' },
      error: null,
      claimedByAgentId: agent.id,
      leaseExpiresAt: null,
      createdAt: job.createdAt.toISOString(),
      updatedAt: expect.any(String),
    })
    expect(await (await call(h, 'GET', `/api/jobs/${job.id}`, { user })).json()).toEqual(body)
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'succeeded', leaseId: null, leaseExpiresAt: null })
  })

  it('with an API key: claim, then complete without a session id (stored as null)', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const { key } = await insertApiKey(h.db, user.id)
    const lease = await (await claim(h, user, job.id, agent.id, { key })).json()
    const res = await complete(h, user, job.id, { leaseId: lease.leaseId, result: { reply: '' } }, { key })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'succeeded', result: { sessionId: null, reply: '' } })
  })

  it('the holder fails the job with a reason: `failed`, the reason as `error`; final, never claimed again', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const { key } = await insertApiKey(h.db, user.id)
    const lease = await claimed(h, user, job.id, agent.id)
    const res = await failJob(h, user, job.id, { leaseId: lease.leaseId, reason: '  Tool unavailable  ' }, { key })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ jobId: job.id, status: 'failed', error: 'Tool unavailable', result: null, claimedByAgentId: agent.id, leaseExpiresAt: null })
    expect(await (await call(h, 'GET', `/api/jobs/${job.id}`, { user })).json()).toMatchObject({ status: 'failed', error: 'Tool unavailable' })
    const again = await claim(h, user, job.id, agent.id)
    expect(again.status).toBe(409)
    expect(await again.json()).toEqual({ error: 'Job already finished', code: 'INVALID_TRANSITION' })
  })

  it('an expired lease returns the job to the queue: read as `queued`, claimed again under a new lease; the stale holder gets 409', async () => {
    const { user, agent } = await chatUser(h)
    const next = await seedChatAgent(h, user, null)
    const job = await seedJob(h, user, agent)
    const start = Date.now()
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(start)
    const first = await claimed(h, user, job.id, agent.id)
    expect(Date.parse(first.leaseExpiresAt)).toBe(start + LEASE_MS)

    // A moment before the expiry the lease holds: another claim is refused.
    vi.setSystemTime(start + LEASE_MS - 1000)
    expect((await claim(h, user, job.id, next.id)).status).toBe(409)
    expect(await (await call(h, 'GET', `/api/jobs/${job.id}`, { user })).json()).toMatchObject({ status: 'running', claimedByAgentId: agent.id })

    vi.setSystemTime(start + LEASE_MS)
    expect(await (await call(h, 'GET', `/api/jobs/${job.id}`, { user })).json()).toMatchObject({ status: 'queued', claimedByAgentId: null, leaseExpiresAt: null })
    const second = await claimed(h, user, job.id, next.id)
    expect(second).toMatchObject({ status: 'running', claimedByAgentId: next.id })
    expect(second.leaseId).not.toBe(first.leaseId)
    expect(Date.parse(second.leaseExpiresAt)).toBe(start + 2 * LEASE_MS)

    const stale = await complete(h, user, job.id, { leaseId: first.leaseId, result: { reply: 'late' } })
    expect(stale.status).toBe(409)
    expect(await stale.json()).toEqual({ error: 'Lease not held: the job is not claimed under this lease', code: 'LEASE_LOST' })
    const done = await complete(h, user, job.id, { leaseId: second.leaseId, result: { reply: 'on time' } })
    expect(done.status).toBe(200)
    expect(await done.json()).toMatchObject({ status: 'succeeded', claimedByAgentId: next.id, result: { reply: 'on time' } })
  })
})

describe('The job lease under concurrency', () => {
  it('20 concurrent claims of a job whose lease ran out: exactly one takes it, 19 get ALREADY_CLAIMED, the old holder’s complete is 409', async () => {
    const { user, agent } = await chatUser(h)
    const claimers = await Promise.all(Array.from({ length: 20 }, () => seedChatAgent(h, user, null)))
    const job = await seedJob(h, user, agent)
    const start = Date.now()
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(start)
    const old = await claimed(h, user, job.id, agent.id)
    vi.setSystemTime(start + LEASE_MS + 1)
    const [late, ...answers] = await Promise.all([
      complete(h, user, job.id, { leaseId: old.leaseId, result: { reply: 'late' } }),
      ...claimers.map((a) => claim(h, user, job.id, a.id)),
    ])
    expect(late.status).toBe(409)
    expect((await late.json()).code).toBe('LEASE_LOST')
    const won = answers.filter((r) => r.status === 200)
    expect(won).toHaveLength(1)
    const lost = answers.filter((r) => r.status === 409)
    expect(lost).toHaveLength(19)
    for (const r of lost) expect(await r.json()).toEqual({ error: 'Job already claimed', code: 'ALREADY_CLAIMED' })
    const winner = await won[0].json()
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'running', claimedByAgentId: winner.claimedByAgentId, leaseId: winner.leaseId, result: null })
  })

  it('a complete and a fail, and two completes, at once: one is applied, the other is 409 `Job already finished`', async () => {
    const { user, agent } = await chatUser(h)
    for (const second of ['fail', 'complete'] as const) {
      const job = await seedJob(h, user, agent)
      const { leaseId } = await claimed(h, user, job.id, agent.id)
      const answers = await Promise.all([
        complete(h, user, job.id, { leaseId, result: { reply: 'first' } }),
        second === 'fail' ? failJob(h, user, job.id, { leaseId, reason: 'second' }) : complete(h, user, job.id, { leaseId, result: { reply: 'second' } }),
      ])
      const ok = answers.filter((r) => r.status === 200)
      expect(ok).toHaveLength(1)
      const refused = answers.find((r) => r.status === 409)!
      expect(await refused.json()).toEqual({ error: 'Job already finished', code: 'INVALID_TRANSITION' })
      const applied = await ok[0].json()
      const row = await jobRow(h, job.id)
      expect(row.status).toBe(applied.status)
      expect(row.result).toEqual(applied.result)
      expect(row.error).toBe(applied.error)
    }
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
