import { afterAll, describe, expect, it } from 'vitest'
import { signDelivery } from '../../../lib/queue/sign'
import { insertApiKey } from '../../auth/helpers'
import type { Harness } from '../../support/harness'
import { call, freshIp, FORBIDDEN_ORIGIN } from '../../support/requests'
import { CHAT_URL, chat, chatHarness, chatUser, claimed, closeRuntimes, complete, deliver, failJob, jobRow, seedJob } from './helpers'
import { useFixture } from '../../support/harness'

const h = useFixture(() => chatHarness())
afterAll(() => closeRuntimes())

const UNAUTHORIZED = { error: 'Unauthorized', code: 'UNAUTHORIZED' }

// Without credentials, with forged ones, and another user's on the job routes: tests/families/common-route-checks.test.ts.
describe('no session', () => {
  it('a claim with a Bearer that is no key at all is 401', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    for (const key of ['not-a-key', '']) {
      const res = await h.web.request(`/api/jobs/${job.id}/claim`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ claimerAgentId: agent.id }),
      })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual(UNAUTHORIZED)
    }
    expect((await jobRow(h, job.id)).claimedByAgentId).toBeNull()
  })

  it('a cookie-authenticated chat or claim from a foreign Origin is 403, and changes nothing', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const evil = { origin: 'https://evil.example' }
    const sent = await chat(h, user, { message: 'hi' }, evil)
    expect(sent.status).toBe(403)
    expect(await sent.json()).toEqual(FORBIDDEN_ORIGIN)
    const claim = await call(h, 'POST', `/api/jobs/${job.id}/claim`, { user, body: { claimerAgentId: agent.id }, headers: evil })
    expect(claim.status).toBe(403)
    expect((await jobRow(h, job.id)).claimedByAgentId).toBeNull()
  })
})

describe('another user', () => {
  it('cannot claim someone else’s job by API key, even naming the job owner’s agent: 404', async () => {
    const alice = await chatUser(h)
    const bob = await chatUser(h)
    const job = await seedJob(h, alice.user, alice.agent)
    const { key } = await insertApiKey(h.db, bob.user.id)
    const byKey = await h.web.request(`/api/jobs/${job.id}/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'cf-connecting-ip': freshIp() },
      body: JSON.stringify({ claimerAgentId: alice.agent.id }),
    })
    expect(byKey.status).toBe(404)
    expect((await jobRow(h, job.id)).claimedByAgentId).toBeNull()
  })

  it('cannot claim its own job for someone else’s agent', async () => {
    const alice = await chatUser(h)
    const bob = await chatUser(h)
    const job = await seedJob(h, alice.user, alice.agent)
    const res = await call(h, 'POST', `/api/jobs/${job.id}/claim`, { user: alice.user, body: { claimerAgentId: bob.agent.id } })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
  })

  it('chat and status reach only the caller’s own agent', async () => {
    const alice = await chatUser(h)
    const stranger = await h.seedUser('Stranger', `stranger-${crypto.randomUUID().slice(0, 8)}@example.com`)
    expect((await chat(h, stranger, { message: 'hi' })).status).toBe(404)
    expect((await call(h, 'GET', '/api/gateway/status', { user: stranger })).status).toBe(404)
    expect(alice.runtime.hits.get('/api/gateway/chat')).toBeUndefined()
    expect(alice.runtime.hits.get('/api/gateway/sessions')).toBeUndefined()
  })
})

describe('the queue receiver takes signed deliveries only', () => {
  it('401 without a signature, with a wrong key, or signed for another URL or body; the job is untouched', async () => {
    const { user, agent, runtime } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const body = JSON.stringify({ jobId: job.id })
    const post = (headers: Record<string, string>) => h.web.request(CHAT_URL, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })

    const none = await post({})
    expect(none.status).toBe(401)
    expect(await none.json()).toEqual({ error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' })
    for (const signature of [
      await signDelivery('another-key', CHAT_URL, body),
      await signDelivery('chat-family-queue-key', 'http://127.0.0.1:8787/api/cron/watchdog', body),
      await signDelivery('chat-family-queue-key', CHAT_URL, JSON.stringify({ jobId: crypto.randomUUID() })),
      'not.a.jwt',
    ]) {
      const res = await post({ 'upstash-signature': signature })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ error: 'Invalid queue signature', code: 'INVALID_SIGNATURE' })
    }
    expect(runtime.hits.get('/api/gateway/chat')).toBeUndefined()
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'queued', attempts: 0 })
    // The same delivery, signed, goes through.
    expect((await deliver(h, job.id)).status).toBe(200)
  })
})

describe('ending a claimed job', () => {
  it('no credentials, a Bearer that is no key, or a foreign Origin: refused, the job unchanged', async () => {
    const { user, agent } = await chatUser(h)
    const job = await seedJob(h, user, agent)
    const { leaseId } = await claimed(h, user, job.id, agent.id)
    for (const path of ['complete', 'fail']) {
      const body = JSON.stringify({ leaseId, result: { reply: 'x' }, reason: 'x' })
      for (const authorization of [undefined, 'Bearer not-a-key', `Bearer ${leaseId}`]) {
        const res = await h.web.request(`/api/jobs/${job.id}/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'cf-connecting-ip': freshIp(), ...(authorization ? { authorization } : {}) },
          body,
        })
        expect(res.status).toBe(401)
        expect(await res.json()).toEqual(UNAUTHORIZED)
      }
      const evil = await call(h, 'POST', `/api/jobs/${job.id}/${path}`, { user, body: JSON.parse(body), headers: { origin: 'https://evil.example' } })
      expect(evil.status).toBe(403)
    }
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'running', leaseId, result: null, error: null })
  })

  it('another user holding the right lease id cannot complete or fail the job (404), by session or API key', async () => {
    const alice = await chatUser(h)
    const bob = await chatUser(h)
    const job = await seedJob(h, alice.user, alice.agent)
    const { leaseId } = await claimed(h, alice.user, job.id, alice.agent.id)
    const { key } = await insertApiKey(h.db, bob.user.id)
    for (const opts of [{}, { key }]) {
      const done = await complete(h, bob.user, job.id, { leaseId, result: { reply: 'hijacked' } }, opts)
      expect(done.status).toBe(404)
      expect(await done.json()).toEqual({ error: 'Job not found', code: 'NOT_FOUND' })
      const failed = await failJob(h, bob.user, job.id, { leaseId, reason: 'hijacked' }, opts)
      expect(failed.status).toBe(404)
    }
    expect(await jobRow(h, job.id)).toMatchObject({ status: 'running', leaseId, result: null, error: null })
    // And Alice's lease still ends it.
    expect((await complete(h, alice.user, job.id, { leaseId, result: { reply: 'mine' } })).status).toBe(200)
  })

  it('GET never shows the lease id (only the claim answers it); another user’s GET is 404', async () => {
    const alice = await chatUser(h)
    const bob = await chatUser(h)
    const job = await seedJob(h, alice.user, alice.agent)
    await claimed(h, alice.user, job.id, alice.agent.id)
    const mine = await (await call(h, 'GET', `/api/jobs/${job.id}`, { user: alice.user })).json()
    expect(mine.leaseId).toBeUndefined()
    expect((await call(h, 'GET', `/api/jobs/${job.id}`, { user: bob.user })).status).toBe(404)
  })
})
