import { eq } from 'drizzle-orm'
import { afterAll, describe, expect, it } from 'vitest'
import { CHAT_SWEEP_PATH, QUEUED_SWEEP_AFTER_MS, sweepQueuedJobs } from '../../../functions/chat/sweep'
import { signDelivery } from '../../../lib/queue/sign'
import { chatJobs } from '../../../schema'
import { useFixture } from '../../support/harness'
import { chatHarness, chatUser, closeRuntimes, echo, jobRow, localQueue, QUEUE_KEY, seedJob } from './helpers'

const h = useFixture(() => chatHarness())
afterAll(() => closeRuntimes())

const SWEEP_URL = `http://127.0.0.1:8787${CHAT_SWEEP_PATH}`

/** The cron's signed delivery of the sweep (body `{}` unless given). */
async function sweep(body = '{}', key = QUEUE_KEY, url = SWEEP_URL) {
  return h.web.request(SWEEP_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(key, url, body) },
    body,
  })
}

/** Moves a job's last change `ms` into the past (time passed since it was queued). */
const age = (jobId: string, ms: number) => h.db.update(chatJobs).set({ updatedAt: new Date(Date.now() - ms) }).where(eq(chatJobs.id, jobId))

/** Ends every job still queued (as failed), so one test's jobs never count in the next sweep. */
const settleOthers = () => h.db.update(chatJobs).set({ status: 'failed' }).where(eq(chatJobs.status, 'queued'))

describe('POST /api/queue/chat/sweep (jobs whose queue message was lost)', () => {
  it('publishes again a job queued past the bound; the queue delivers it and it succeeds', async () => {
    await settleOthers()
    const { user, agent, runtime } = await chatUser(h, echo('hello'))
    const lost = await seedJob(h, user, agent) // stored, its message never published (lost)
    await age(lost.id, QUEUED_SWEEP_AFTER_MS + 60_000)
    const res = await sweep()
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, found: 1, republished: 1, failed: 0 })
    await localQueue(h).idle()
    expect(await jobRow(h, lost.id)).toMatchObject({ status: 'succeeded', attempts: 1, result: { sessionId: 'dashboard', reply: 'Echo: hello' } })
    expect(runtime.bodies.get('/api/gateway/chat')!.map((b) => JSON.parse(b).deliveryId)).toEqual([lost.id])
  })

  it('leaves alone jobs within the bound, running, claimed or finished', async () => {
    await settleOthers()
    const { user, agent, runtime } = await chatUser(h)
    const old = QUEUED_SWEEP_AFTER_MS + 60_000
    const recent = await seedJob(h, user, agent)
    await age(recent.id, QUEUED_SWEEP_AFTER_MS - 60_000)
    const running = await seedJob(h, user, agent, { status: 'running' })
    const claimed = await seedJob(h, user, agent, { claimedByAgentId: agent.id, claimedAt: new Date() })
    const done = await seedJob(h, user, agent, { status: 'succeeded' })
    for (const j of [running, claimed, done]) await age(j.id, old)
    const res = await sweep()
    expect(await res.json()).toEqual({ ok: true, found: 0, republished: 0, failed: 0 })
    await localQueue(h).idle()
    expect(runtime.hits.get('/api/gateway/chat')).toBeUndefined()
    expect((await jobRow(h, recent.id)).status).toBe('queued')
  })

  it('a replayed sweep publishes nothing more: the job waits the full bound again', async () => {
    await settleOthers()
    const { user, agent, runtime } = await chatUser(h, { status: 502, body: { error: 'down' } })
    const job = await seedJob(h, user, agent)
    await age(job.id, QUEUED_SWEEP_AFTER_MS + 60_000)
    // The runtime fails: the job stays queued between the queue's retries, with a fresh updatedAt.
    expect(await (await sweep()).json()).toMatchObject({ republished: 1 })
    expect(await (await sweep()).json()).toEqual({ ok: true, found: 0, republished: 0, failed: 0 })
    await localQueue(h).idle()
    expect((await jobRow(h, job.id)).updatedAt.getTime()).toBeGreaterThan(Date.now() - QUEUED_SWEEP_AFTER_MS)
    expect(runtime.hits.get('/api/gateway/chat')).toBeGreaterThanOrEqual(1)
  })

  it('two sweeps at once deliver a lost job once (deduplicated by its id)', async () => {
    await settleOthers()
    const { user, agent, runtime } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    await age(job.id, QUEUED_SWEEP_AFTER_MS + 60_000)
    const [a, b] = await Promise.all([sweepQueuedJobs(h.services), sweepQueuedJobs(h.services)])
    expect(a.found + b.found).toBeGreaterThanOrEqual(1)
    await localQueue(h).idle()
    expect(runtime.hits.get('/api/gateway/chat')).toBe(1)
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'succeeded', attempts: 1 })
  })

  it('a publish that fails is counted, and the job is found again by the next sweep', async () => {
    await settleOthers()
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    await age(job.id, QUEUED_SWEEP_AFTER_MS + 60_000)
    const failing = { ...h.services, queue: { publish: async () => Promise.reject(new Error('queue down')), schedule: h.services.queue.schedule } }
    expect(await sweepQueuedJobs(failing)).toEqual({ found: 1, republished: 0, failed: 1 })
    expect(await sweepQueuedJobs(h.services)).toEqual({ found: 1, republished: 1, failed: 0 })
    await localQueue(h).idle()
  })

  it('400 on a body that is not JSON; 401 without or with a forged signature, and nothing is published', async () => {
    await settleOthers()
    const { user, agent, runtime } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    await age(job.id, QUEUED_SWEEP_AFTER_MS + 60_000)
    expect((await sweep('not json')).status).toBe(400)
    const unsigned = await h.web.request(SWEEP_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(unsigned.status).toBe(401)
    expect(await unsigned.json()).toEqual({ error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' })
    for (const forged of [sweep('{}', 'another-key'), sweep('{}', QUEUE_KEY, 'http://127.0.0.1:8787/api/queue/chat')]) {
      const res = await forged
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ error: 'Invalid queue signature', code: 'INVALID_SIGNATURE' })
    }
    await localQueue(h).idle()
    expect(runtime.hits.get('/api/gateway/chat')).toBeUndefined()
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'queued', attempts: 0 })
  })
})
