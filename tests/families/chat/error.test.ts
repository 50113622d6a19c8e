import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { app as chatApp } from '../../../functions/chat/app'
import { createPlatformApp } from '../../../lib/app'
import type { Services } from '../../../lib/context'
import { UpstashKv } from '../../../lib/kv/upstash'
import { QStashQueue } from '../../../lib/queue/qstash'
import { signDelivery } from '../../../lib/queue/sign'
import { agents, chatJobs, users } from '../../../schema'
import { BROWSER, type SeededUser, useFixture } from '../../support/harness'
import { call, freshIp, withinOneWindow } from '../../support/requests'
import { CHAT_URL, QUEUE_KEY, chat, chatHarness, chatRuntime, chatUser, claimed, closeRuntimes, complete, deliver, echo, failJob, jobRow, LEASE_MS, seedChatAgent, seedJob, slots } from './helpers'
import { waitFor } from '../../support/wait'
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy'
import { serveFetch, type Loopback } from '../../support/loopback'
import { startQStashServer, type QStashServer } from '../../support/qstash-server'

const h = useFixture(() => chatHarness())
afterAll(() => closeRuntimes())
afterEach(() => vi.useRealTimers())

const newUser = (name: string) => h.seedUser(name, `${name.toLowerCase()}-${crypto.randomUUID().slice(0, 8)}@example.com`)

/** Nothing listens on the discard port: a store there is a store that is down. */
const DOWN = 'http://127.0.0.1:9'

/** The chat family on the harness's services with one store replaced by one that is down. */
const withStore = (over: Partial<Services>) => createPlatformApp(() => ({ ...h.services, ...over })).route('/', chatApp)
const chatOn = (app: ReturnType<typeof withStore>, user: SeededUser, body: unknown) =>
  app.request('/api/gateway/chat', {
    method: 'POST',
    headers: { ...BROWSER, cookie: user.cookie, 'content-type': 'application/json', 'cf-connecting-ip': freshIp() },
    body: JSON.stringify(body),
  })

const jobsOf = (userId: string) => h.db.select().from(chatJobs).where(eq(chatJobs.userId, userId))

describe('POST /api/gateway/chat: 400', () => {
  it('`Message required` when missing, blank, not a string or the body is not an object; over 32 000 characters is refused too', async () => {
    const { user } = await chatUser(h)
    for (const body of [{}, { message: '' }, { message: '   \n\t ' }, { message: 42 }, { message: null }, [], 'null']) {
      const res = await chat(h, user, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'Message required', code: 'VALIDATION' })
    }
    const long = await chat(h, user, { message: 'z'.repeat(32_001) })
    expect(long.status).toBe(400)
    expect(await long.json()).toMatchObject({ error: 'Message must be at most 32000 characters', code: 'VALIDATION' })
    const malformed = await chat(h, user, '{"message": ')
    expect(await malformed.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
    expect(await jobsOf(user.id)).toEqual([])
  })
})

describe('POST /api/gateway/chat and GET /api/gateway/status: 404 and 503', () => {
  it('`No agent found` when the user has templates only; `No OpenClaw instance found` without a provisioned runtime', async () => {
    const user = await newUser('Templates')
    const f = await chatRuntime()
    await seedChatAgent(h, user, f.url, { status: 'template' })
    for (const res of [await chat(h, user, { message: 'hi' }), await call(h, 'GET', '/api/gateway/status', { user })]) {
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error: 'No agent found', code: 'NOT_FOUND' })
    }
    await seedChatAgent(h, user, null, { runtimeServiceId: null, status: 'provisioning' })
    for (const res of [await chat(h, user, { message: 'hi' }), await call(h, 'GET', '/api/gateway/status', { user })]) {
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error: 'No OpenClaw instance found', code: 'NOT_FOUND' })
    }
    expect(await jobsOf(user.id)).toEqual([])
  })

  it('`User not found` when the account is gone while its session is still cached', async () => {
    const user = await newUser('Gone')
    expect((await call(h, 'GET', '/api/gateway/status', { user })).status).toBe(404) // the session is now cached
    await h.db.delete(users).where(eq(users.id, user.id))
    const res = await chat(h, user, { message: 'anyone?' })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'User not found', code: 'USER_NOT_FOUND' })
  })

  it('503 `No gateway token available` when the agent’s runtime has no gateway token (or it no longer opens)', async () => {
    const user = await newUser('Tokenless')
    const f = await chatRuntime()
    const agent = await seedChatAgent(h, user, f.url, { gatewayToken: null, gatewayTokenKeyId: null })
    const res = await chat(h, user, { message: 'hi' })
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'No gateway token available', code: 'NO_GATEWAY_TOKEN' })
    // A token sealed for another owner does not open for this one.
    const other = await seedChatAgent(h, h.users.bob, f.url)
    await h.db.update(agents).set({ gatewayToken: other.gatewayToken, gatewayTokenKeyId: other.gatewayTokenKeyId }).where(eq(agents.id, agent.id))
    const unreadable = await chat(h, user, { message: 'hi' })
    expect(unreadable.status).toBe(503)
    // The spec's answer, with a code and what to do: a token that does not open is re-made by a repair.
    expect(await unreadable.json()).toEqual({
      error: 'No gateway token available',
      code: 'NO_GATEWAY_TOKEN',
      agentId: agent.id,
      hint: expect.stringMatching(/cannot be read.*POST \/api\/agents\/\{id\}\/repair.*or delete it/),
    })
    // Sealed under a key id this server does not have (its keys changed): the same answer, never a 500.
    await h.db.update(agents).set({ gatewayTokenKeyId: 'retired-key' }).where(eq(agents.id, agent.id))
    expect(await (await chat(h, user, { message: 'hi' })).json()).toMatchObject({ error: 'No gateway token available', code: 'NO_GATEWAY_TOKEN' })
    expect(await jobsOf(user.id)).toEqual([])
    expect((await slots(h, user.id)).user).toBe(0)
  })
})

describe('POST /api/gateway/chat: 429', () => {
  it('the per-IP limit: 60 a minute, then 429 `Too many requests` with Retry-After, before the session is even read', async () => {
    await withinOneWindow(60)
    const ipAddress = freshIp()
    for (let i = 0; i < 60; i++) {
      const res = await call(h, 'POST', '/api/gateway/chat', { body: {}, headers: { 'cf-connecting-ip': ipAddress } })
      expect(res.status).toBe(401)
    }
    const refused = await call(h, 'POST', '/api/gateway/chat', { body: {}, headers: { 'cf-connecting-ip': ipAddress } })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
  })

  it('the workload gate: the user’s 4 slots taken, 429 `WORKLOAD_LIMIT` with retryAfterSeconds when the first ticket expires', async () => {
    const { user } = await chatUser(h, { ...echo(), delayMs: 1500 })
    const taken = await Promise.all([chat(h, user, { message: 'a'.repeat(900) }), chat(h, user, { message: 'b' }), chat(h, user, { message: 'c' })])
    expect(taken.map((r) => r.status)).toEqual([202, 202, 202])
    const refused = await chat(h, user, { message: 'd' })
    expect(refused.status).toBe(429)
    const body = await refused.json()
    expect(body).toEqual({ error: 'Too many chats in progress', code: 'WORKLOAD_LIMIT', retryAfterSeconds: expect.any(Number), reason: 'user_slots' })
    // The soonest ticket expires after CHAT_TICKET_TTL_SEC (300 s) at most.
    expect(body.retryAfterSeconds).toBeGreaterThan(290)
    expect(body.retryAfterSeconds).toBeLessThanOrEqual(300)
    expect(refused.headers.get('retry-after')).toBe(String(body.retryAfterSeconds))
    expect(refused.headers.get('ratelimit-limit')).toBe('60')
    expect(await jobsOf(user.id)).toHaveLength(3)
    // As jobs end their slots come back: chat is admitted again.
    await waitFor(async () => (await slots(h, user.id)).user === 0)
    expect((await chat(h, user, { message: 'e' })).status).toBe(202)
  })
})

describe('POST /api/gateway/chat: stores that are down', () => {
  it('503 `KV_UNAVAILABLE` with Retry-After when the gate cannot be asked (kv store down): nothing stored', async () => {
    const { user } = await chatUser(h)
    const res = await chatOn(withStore({ kv: new UpstashKv(DOWN, 'token') }), user, { message: 'hi' })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(await res.json()).toEqual({ error: 'Key-value store unavailable', code: 'KV_UNAVAILABLE' })
    expect(await jobsOf(user.id)).toEqual([])
  }, 30_000)

  it('502 `Queue unavailable` when the queue refuses the job: the job is failed and its slots given back', async () => {
    const { user, runtime } = await chatUser(h)
    const res = await chatOn(withStore({ queue: new QStashQueue('token', 'http://127.0.0.1:8787', DOWN) }), user, { message: 'hi' })
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({ error: 'Queue unavailable', code: 'QUEUE_UNAVAILABLE' })
    const [job] = await jobsOf(user.id)
    expect(job).toMatchObject({ status: 'failed', error: 'Queue unavailable', attempts: 0 })
    expect((await slots(h, user.id)).user).toBe(0)
    expect(runtime.hits.get('/api/gateway/chat')).toBeUndefined()
  }, 30_000)
})

describe('POST /api/gateway/chat: QStash refusing, failing or never answering (the look-alike behind the fault proxy)', () => {
  /** Each publish gives up after this long (`QSTASH_TIMEOUT_MS`). */
  const TIMEOUT_MS = 400
  /** The bound on an answer while the queue is down: the publish's deadline, and room for a loaded machine. */
  const WITHIN_MS = TIMEOUT_MS + 1500
  const TOKEN = 'chat-dependencies-qstash-token'
  let qstash: QStashServer
  let proxy: FaultProxy
  let receiver: Loopback
  beforeAll(async () => {
    // Deliveries reach the harness's own web app over a socket, signed with the key its verifier holds.
    qstash = await startQStashServer({ token: TOKEN, currentSigningKey: QUEUE_KEY, nextSigningKey: QUEUE_KEY })
    proxy = await startFaultProxy({ target: qstash.url, mode: 'http' })
    receiver = await serveFetch((req) => h.web.fetch(req))
  })
  afterAll(async () => {
    await proxy?.close()
    await qstash?.close()
    await receiver?.close()
  })
  const viaProxy = () => withStore({ queue: new QStashQueue(TOKEN, receiver.url, proxy.url, { timeoutMs: TIMEOUT_MS }) })

  it.each([
    ['blackholed (accepts, never answers)', 'blackhole' as const],
    ['answering 503', { kind: 'status', status: 503 } as const],
    ['refusing connections', 'refuse' as const],
  ])('502 `Queue unavailable` in time while QStash is %s: the job is failed, its slots given back, nothing published; once back, a chat goes through', async (_name, fault) => {
    const { user, runtime } = await chatUser(h)
    const app = viaProxy()
    await proxy.set(fault)
    const started = performance.now()
    const res = await Promise.resolve(chatOn(app, user, { message: 'hi' })).finally(() => proxy.set('pass'))
    const ms = performance.now() - started
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({ error: 'Queue unavailable', code: 'QUEUE_UNAVAILABLE' })
    expect(ms).toBeLessThan(WITHIN_MS)
    const [failed] = await jobsOf(user.id)
    expect(failed).toMatchObject({ status: 'failed', error: 'Queue unavailable', attempts: 0 })
    expect(qstash.published.some((m) => m.body.includes(failed.id))).toBe(false)
    expect((await slots(h, user.id)).user).toBe(0)
    expect(runtime.hits.get('/api/gateway/chat')).toBeUndefined()

    // QStash is back: the next chat is queued, delivered through it and answered by the runtime.
    const ok = await chatOn(app, user, { message: 'again' })
    expect(ok.status).toBe(202)
    const { jobId } = await ok.json()
    await waitFor(async () => (await jobRow(h, jobId))?.status === 'succeeded', { what: 'the chat job delivered through QStash' })
    expect(qstash.published.filter((m) => m.body.includes(jobId))).toHaveLength(1)
    expect(await jobRow(h, failed.id)).toMatchObject({ status: 'failed' }) // the refused one is not sent later
  }, 30_000)
})

describe('the queue receiver', () => {
  it('a job that does not exist is a no-op 200 (the queue stops); a body without jobId is 400', async () => {
    const res = await deliver(h, crypto.randomUUID())
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ ok: true, status: null, delivered: false })
    const text = '{}'
    const bad = await h.web.request(CHAT_URL, { method: 'POST', headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(QUEUE_KEY, CHAT_URL, text) }, body: text })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ code: 'VALIDATION' })
  })

  it('a job whose agent’s token no longer opens fails at once with the reason (a retry would not mend it); its slots go back', async () => {
    const { user, agent, runtime } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    await h.db.update(agents).set({ gatewayTokenKeyId: 'retired-key' }).where(eq(agents.id, agent.id))
    const res = await deliver(h, job.id)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'failed' })
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringMatching(/gateway token cannot be read.*repair the agent/) })
    expect(runtime.hits.get('/api/gateway/chat') ?? 0).toBe(0)
    expect((await slots(h, user.id)).user).toBe(0)
  })

  it('a runtime that answers without a reply is a failed delivery', async () => {
    const { user, agent } = await chatUser(h, { body: { ok: true } })
    const job = await seedJob(h, user, agent)
    expect((await deliver(h, job.id)).status).toBe(502)
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'queued', error: 'Runtime answer has no reply' })
  })
})

describe('GET /api/jobs/:jobId and POST /api/jobs/:jobId/claim', () => {
  it('404 `Job not found` for an unknown id', async () => {
    const { user, agent } = await chatUser(h)
    const res = await call(h, 'GET', `/api/jobs/${crypto.randomUUID()}`, { user })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Job not found', code: 'NOT_FOUND' })
    const claim = await call(h, 'POST', `/api/jobs/${crypto.randomUUID()}/claim`, { user, body: { claimerAgentId: agent.id } })
    expect(claim.status).toBe(404)
    expect(await claim.json()).toEqual({ error: 'Job not found', code: 'NOT_FOUND' })
  })

  it('claim: 400 without claimerAgentId; 404 `Agent not found` for an agent that is not the caller’s', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    for (const body of [{}, { claimerAgentId: '' }, { claimerAgentId: 7 }]) {
      const res = await call(h, 'POST', `/api/jobs/${job.id}/claim`, { user, body })
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'claimerAgentId required', code: 'VALIDATION' })
    }
    for (const claimerAgentId of [crypto.randomUUID(), (await chatUser(h)).agent.id]) {
      const res = await call(h, 'POST', `/api/jobs/${job.id}/claim`, { user, body: { claimerAgentId } })
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
    }
    expect((await jobRow(h, job.id)).claimedByAgentId).toBeNull()
  })

  it('claim: 409 `Job already claimed`, also for the same agent again; 409 `Job already finished`', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    expect((await call(h, 'POST', `/api/jobs/${job.id}/claim`, { user, body: { claimerAgentId: agent.id } })).status).toBe(200)
    const again = await call(h, 'POST', `/api/jobs/${job.id}/claim`, { user, body: { claimerAgentId: agent.id } })
    expect(again.status).toBe(409)
    expect(await again.json()).toEqual({ error: 'Job already claimed', code: 'ALREADY_CLAIMED' })
    for (const status of ['succeeded', 'failed'] as const) {
      const done = await seedJob(h, user, agent, { status })
      const res = await call(h, 'POST', `/api/jobs/${done.id}/claim`, { user, body: { claimerAgentId: agent.id } })
      expect(res.status).toBe(409)
      expect(await res.json()).toEqual({ error: 'Job already finished', code: 'INVALID_TRANSITION' })
    }
  })
})

describe('POST /api/jobs/:jobId/complete and /fail', () => {
  const LEASE_NOT_HELD = { error: 'Lease not held: the job is not claimed under this lease', code: 'LEASE_LOST' }

  it('400 for a bad body, before anything changes', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const { leaseId } = await claimed(h, user, job.id, agent.id)
    const completes: Array<[unknown, string]> = [
      [{}, 'leaseId required'],
      [{ leaseId: '', result: { reply: 'x' } }, 'leaseId required'],
      [{ leaseId: 7, result: { reply: 'x' } }, 'leaseId required'],
      [{ leaseId: 'x'.repeat(256), result: { reply: 'x' } }, 'leaseId must be at most 255 characters'],
      [{ leaseId }, 'result required'],
      [{ leaseId, result: 'done' }, 'result required'],
      [{ leaseId, result: {} }, 'result.reply required'],
      [{ leaseId, result: { reply: 5 } }, 'result.reply required'],
      [{ leaseId, result: { reply: 'x'.repeat(500_001) } }, 'result.reply must be at most 500000 characters'],
    ]
    for (const [body, error] of completes) {
      const res = await complete(h, user, job.id, body)
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
    }
    const fails: Array<[unknown, string]> = [
      [{ reason: 'x' }, 'leaseId required'],
      [{ leaseId }, 'reason required'],
      [{ leaseId, reason: '   ' }, 'reason required'],
      [{ leaseId, reason: 'x'.repeat(2049) }, 'reason must be at most 2048 characters'],
    ]
    for (const [body, error] of fails) {
      const res = await failJob(h, user, job.id, body)
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
    }
    const malformed = await complete(h, user, job.id, '{"leaseId":')
    expect(malformed.status).toBe(400)
    expect((await malformed.json()).code).toBe('INVALID_JSON')
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'running', leaseId, result: null, error: null })
  })

  it('404 `Job not found` for an unknown job', async () => {
    const { user } = await chatUser(h)
    for (const res of [
      await complete(h, user, crypto.randomUUID(), { leaseId: crypto.randomUUID(), result: { reply: 'x' } }),
      await failJob(h, user, crypto.randomUUID(), { leaseId: crypto.randomUUID(), reason: 'x' }),
    ]) {
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error: 'Job not found', code: 'NOT_FOUND' })
    }
  })

  it('409 `Lease not held` for a job never claimed, or a lease id that is not the current one', async () => {
    const { user, agent } = await chatUser(h)
    const unclaimed = await seedJob(h, user, agent)
    const res = await complete(h, user, unclaimed.id, { leaseId: crypto.randomUUID(), result: { reply: 'x' } })
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual(LEASE_NOT_HELD)
    const job = await seedJob(h, user, agent)
    await claimed(h, user, job.id, agent.id)
    const wrong = await failJob(h, user, job.id, { leaseId: crypto.randomUUID(), reason: 'x' })
    expect(wrong.status).toBe(409)
    expect(await wrong.json()).toEqual(LEASE_NOT_HELD)
    expect(await jobRow(h, unclaimed.id)).toMatchObject({ status: 'queued', result: null })
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'running', error: null })
  })

  it('replays: a second complete, or a fail after it, is 409 `Job already finished` and changes nothing', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const { leaseId } = await claimed(h, user, job.id, agent.id)
    expect((await complete(h, user, job.id, { leaseId, result: { reply: 'first' } })).status).toBe(200)
    for (const res of [
      await complete(h, user, job.id, { leaseId, result: { reply: 'first' } }),
      await complete(h, user, job.id, { leaseId, result: { reply: 'second' } }),
      await failJob(h, user, job.id, { leaseId, reason: 'changed my mind' }),
    ]) {
      expect(res.status).toBe(409)
      expect(await res.json()).toEqual({ error: 'Job already finished', code: 'INVALID_TRANSITION' })
    }
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'succeeded', result: { sessionId: null, reply: 'first' }, error: null })
  })

  it('409 `Lease expired` once the lease ran out, even with nobody claiming since; the job stays in the queue', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const start = Date.now()
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(start)
    const { leaseId } = await claimed(h, user, job.id, agent.id)
    vi.setSystemTime(start + LEASE_MS)
    for (const res of [await complete(h, user, job.id, { leaseId, result: { reply: 'late' } }), await failJob(h, user, job.id, { leaseId, reason: 'late' })]) {
      expect(res.status).toBe(409)
      expect(await res.json()).toEqual({ error: 'Lease expired: claim the job again', code: 'LEASE_LOST' })
    }
    expect(await (await call(h, 'GET', `/api/jobs/${job.id}`, { user })).json()).toMatchObject({ status: 'queued', result: null, error: null, claimedByAgentId: null })
  })

  it('a job a delivery finished while it was claimed: the holder’s complete is 409 `Job already finished`', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const { leaseId } = await claimed(h, user, job.id, agent.id)
    await h.db.update(chatJobs).set({ status: 'succeeded', result: { sessionId: 'dashboard', reply: 'runtime' } }).where(eq(chatJobs.id, job.id))
    const res = await complete(h, user, job.id, { leaseId, result: { reply: 'claimer' } })
    expect(res.status).toBe(409)
    expect((await jobRow(h, job.id)).result).toEqual({ sessionId: 'dashboard', reply: 'runtime' })
  })
})
