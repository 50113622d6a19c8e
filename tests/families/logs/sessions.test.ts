import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { hashSessionToken, newSessionToken, SESSION_COOKIE } from '../../../lib/auth/session'
import { liveSessionHashes } from '../../../lib/auth/session-bound'
import { type DurableNamespaceLike, LOG_TAILS_BINDING, localLogStreams } from '../../../lib/logs/backend'
import { LogTailObject } from '../../../functions/logs/durable'
import { MAX_LOG_STREAMS_PER_USER } from '../../../lib/logs/streams'
import { logTails } from '../../../lib/logs/tail'
import { sessions } from '../../../schema'
import { BROWSER, PASSWORD, type SeededUser, useHarness } from '../../support/harness'
import { call, withinOneWindow } from '../../support/requests'
import { agentWithoutRuntime, closeAllStreams, connect, provisionedAgent, type SseClient, touchRuntime } from './helpers'

/**
 * Finding 11 (part) and 5: one user held 100 concurrent log streams, and a stream outlived the session that opened
 * it. Now a user holds at most 5 at once and opening them is rate limited; a stream ends when its session does.
 */
const h = useHarness()
beforeAll(async () => {
  logTails(h.services.runtimes).options.graceMs = 200
})
afterAll(() => closeAllStreams())

let n = 0
const freshUser = () => h.seedUser(`L${++n}`, `logs-${n}-${crypto.randomUUID().slice(0, 6)}@example.com`)

/** Another live session of `user` (a second browser). */
async function anotherSession(user: SeededUser): Promise<SeededUser> {
  const token = newSessionToken()
  await h.db.insert(sessions).values({ tokenHash: await hashSessionToken(token), userId: user.id, expiresAt: new Date(Date.now() + 24 * 3600_000) })
  return { ...user, token, cookie: `${SESSION_COOKIE}=${token}` }
}

const SESSION_ENDED = { type: 'exit', text: 'Session ended: sign in again', code: 0 }

/** The stream was ended for its session: `exit`, then the server closed it. */
async function endedFor(stream: SseClient) {
  expect(await stream.next((e) => e.type === 'exit')).toMatchObject(SESSION_ENDED)
  await stream.closed
}

/** A stream still running: a new runtime line reaches it. */
async function stillRunning(stream: SseClient, runtimeUrl: string) {
  const path = `/alive-${crypto.randomUUID()}`
  await touchRuntime(runtimeUrl, path)
  await stream.next((e) => e.type === 'line' && e.text.includes(path))
}

describe('live log streams end with their session', () => {
  it('sign-out ends the stream that session opened; a stream of another session keeps running', async () => {
    const user = await freshUser()
    const agent = await provisionedAgent(h, user, 'signout')
    const laptop = await anotherSession(user)
    const [signingOut, staying] = [await connect(h, laptop, agent.id), await connect(h, user, agent.id)]
    await signingOut.next((e) => e.type === 'connected')
    expect((await call(h, 'POST', '/api/auth/signout', { user: laptop })).status).toBe(200)
    await endedFor(signingOut)
    await stillRunning(staying, agent.runtimeUrl!)
    await staying.close()
  })

  it('a password change ends the other sessions’ streams; the changing session keeps its own', async () => {
    const user = await freshUser()
    const agent = await provisionedAgent(h, user, 'password')
    const thief = await anotherSession(user)
    const [stolen, own] = [await connect(h, thief, agent.id), await connect(h, user, agent.id)]
    await stolen.next((e) => e.type === 'connected')
    const res = await call(h, 'POST', '/api/user/password', { user, body: { currentPassword: PASSWORD, newPassword: 'a fresh new passphrase' } })
    expect(res.status).toBe(200)
    await endedFor(stolen)
    await stillRunning(own, agent.runtimeUrl!)
    await own.close()
  })

  it('the periodic check ends a stream whose session was deleted without a notice', async () => {
    const user = await freshUser()
    const running = await provisionedAgent(h, user, 'periodic')
    const other = await anotherSession(user)
    const stream = await connect(h, other, running.id)
    await stream.next((e) => e.type === 'connected')
    await h.db.delete(sessions).where(eq(sessions.tokenHash, await hashSessionToken(other.token)))
    expect(await localLogStreams(h.services).recheckSessions()).toBe(1)
    await endedFor(stream)
  })
})

describe('live log streams: a cap per user and an opening limit', () => {
  it(`a user holds at most ${MAX_LOG_STREAMS_PER_USER} streams: one more is 429 with the rate-limit headers; a closed one frees its place`, async () => {
    const user = await freshUser()
    const agent = await provisionedAgent(h, user, 'cap')
    const streams: SseClient[] = []
    for (let i = 0; i < MAX_LOG_STREAMS_PER_USER; i++) {
      const s = await connect(h, user, agent.id)
      expect(s.status).toBe(200)
      await s.next((e) => e.type === 'connected')
      streams.push(s)
    }
    const over = await call(h, 'GET', `/api/logs/${agent.id}/stream`, { user })
    expect(over.status).toBe(429)
    expect(await over.json()).toEqual({ error: `Too many open log streams: at most ${MAX_LOG_STREAMS_PER_USER} at once; close one first`, code: 'RATE_LIMITED' })
    expect(over.headers.get('ratelimit-limit')).toBe(String(MAX_LOG_STREAMS_PER_USER))
    expect(over.headers.get('ratelimit-remaining')).toBe('0')
    expect(over.headers.get('retry-after')).toBe('10')
    // The open ones are untouched, and another user is not counted with this one.
    await stillRunning(streams[0], agent.runtimeUrl!)
    const bystander = await freshUser()
    const theirs = await provisionedAgent(h, bystander, 'cap-other')
    const ok = await connect(h, bystander, theirs.id)
    expect(ok.status).toBe(200)
    await ok.close()

    await streams.pop()!.close()
    let again: SseClient | null = null
    for (let tries = 0; tries < 50 && !again; tries++) {
      const s = await connect(h, user, agent.id)
      if (s.status === 200) again = s
      else await new Promise((r) => setTimeout(r, 20)) // the server notices the client left
    }
    expect(again?.status).toBe(200)
    await Promise.all([...streams, again!].map((s) => s.close()))
  })

  it('opening streams is limited to 20 a minute per user: then 429 with Retry-After', async () => {
    const user = await freshUser()
    const agent = await agentWithoutRuntime(h, user, 'churn') // each stream ends at once (no runtime): only the opening counts
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {}) // each one logs the missing runtime
    await withinOneWindow(60, 20_000)
    for (let i = 0; i < 20; i++) {
      const s = await connect(h, user, agent.id)
      expect(s.status, `open #${i + 1}`).toBe(200)
      await s.closed
    }
    const res = await call(h, 'GET', `/api/logs/${agent.id}/stream`, { user })
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(res.headers.get('ratelimit-limit')).toBe('20')
    warn.mockRestore()
  })
})

describe('live log streams on Workers: the user’s Durable Object', () => {
  it('counts the user’s streams and ends a stream when the Worker that ended its session tells it', async () => {
    const user = await freshUser()
    const agent = await provisionedAgent(h, user, 'durable')
    const objects = new Map<string, LogTailObject>()
    const names: string[] = []
    const ns: DurableNamespaceLike = {
      idFromName: (name) => (names.push(name), name),
      get: (id) => ({
        fetch: async (input, init) => {
          let obj = objects.get(id as string)
          if (!obj) objects.set(id as string, (obj = new LogTailObject({}, {}, h.services.runtimes, (u, hashes) => liveSessionHashes(h.services.reader, u, hashes))))
          return obj.fetch(new Request(input, init))
        },
      }),
    }
    const env = { [LOG_TAILS_BINDING]: ns }
    const laptop = await anotherSession(user)
    const streams: SseClient[] = []
    for (let i = 0; i < MAX_LOG_STREAMS_PER_USER; i++) {
      const s = await connect(h, i === 0 ? laptop : user, agent.id, env)
      await s.next((e) => e.type === 'connected')
      streams.push(s)
    }
    // One object, the user's, holds them all and refuses one more.
    expect([...objects.keys()]).toEqual([user.id])
    const over = await h.web.request(`/api/logs/${agent.id}/stream`, { headers: { cookie: user.cookie } }, env)
    expect(over.status).toBe(429)
    expect(over.headers.get('retry-after')).toBe('10')
    await over.arrayBuffer()

    // Sign-out in a Worker with the binding: the object is told, the laptop's stream ends, the others run on.
    const out = await h.web.request('/api/auth/signout', { method: 'POST', headers: { cookie: laptop.cookie, ...BROWSER } }, env)
    expect(out.status).toBe(200)
    await endedFor(streams[0])
    await stillRunning(streams[1], agent.runtimeUrl!)
    expect(objects.get(user.id)!.streams.count(user.id)).toBe(MAX_LOG_STREAMS_PER_USER - 1)
    await Promise.all(streams.map((s) => s.close()))
  })

  it('the object refuses a stream without a well-formed session, and a malformed notice', async () => {
    const obj = new LogTailObject({}, {}, h.services.runtimes, async () => new Set())
    const target = JSON.stringify({ agentId: 'a1', name: 'agent-a1' })
    for (const session of [undefined, 'not json', JSON.stringify({ userId: 'u', expiresAt: 1 })]) {
      const headers: Record<string, string> = { 'x-log-target': target, ...(session ? { 'x-log-session': session } : {}) }
      const res = await obj.fetch(new Request('https://log-tail.internal/a1/stream', { headers }))
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error: 'Invalid log stream session', code: 'VALIDATION' })
    }
    const bad = await obj.fetch(new Request('https://log-tail.internal/sessions-ended', { method: 'POST', body: '{"userId": 1}' }))
    expect(bad.status).toBe(400)
  })
})
