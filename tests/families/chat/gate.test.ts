import { afterAll, describe, expect, it } from 'vitest'
import { admitTicket, releaseTicket, type Ticket } from '../../../functions/chat/workload'
import type { Config } from '../../../lib/config'
import { ApiError } from '../../../lib/http/errors'
import type { Harness } from '../../support/harness'
import { withinOneWindow } from '../../support/requests'
import { chat, chatHarness, chatRuntime, closeRuntimes, echo, seedChatAgent, slots } from './helpers'
import { useFixture } from '../../support/harness'
import { waitFor } from '../../support/wait'

/**
 * The workload gate under concurrency, on whichever stores this project runs (the in-process kv, or Upstash REST
 * in front of real Redis): never more tickets than slots, whatever arrives at once.
 */
const h = useFixture(() => chatHarness({ CHAT_GLOBAL_SLOTS: '10' }))
afterAll(() => closeRuntimes())

/** The harness's config with its own gate keys (and any limits the test sets). */
const gate = (over: Partial<Config> = {}): Config => ({ ...h.services.config, CHAT_GATE_NAMESPACE: `g-${crypto.randomUUID().slice(0, 8)}`, ...over })

/** Admits `ticket`, answering the refusal's body instead of throwing it. */
async function admit(config: Config, ticket: Ticket) {
  try {
    await admitTicket(h.services.kv, config, ticket)
    return { admitted: true as const, ticket }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { admitted: false as const, ticket, status: e.status, ...(e.extra as { retryAfterSeconds: number; reason: string }) }
  }
}

const ticket = (userId: string, weight = 1): Ticket => ({ userId, jobId: crypto.randomUUID(), weight })

describe('the gate itself', () => {
  it('200 concurrent chats of one user: exactly its 4 slots are taken, the rest refused with when to retry', async () => {
    const config = gate()
    const user = crypto.randomUUID()
    const results = await Promise.all(Array.from({ length: 200 }, () => admit(config, ticket(user))))
    expect(results.filter((r) => r.admitted)).toHaveLength(4)
    const refused = results.filter((r) => !r.admitted)
    expect(refused).toHaveLength(196)
    for (const r of refused) {
      expect(r).toMatchObject({ status: 429, reason: 'user_slots' })
      // When the first ticket expires: 300 s after it was taken (the burst itself takes a few seconds on real Redis).
      const { retryAfterSeconds } = r as { retryAfterSeconds: number }
      expect(retryAfterSeconds).toBeGreaterThanOrEqual(290)
      expect(retryAfterSeconds).toBeLessThanOrEqual(300)
    }
    expect((await slots(h, user, config)).user).toBe(4)
    expect((await slots(h, user, config)).global).toBe(4)
  })

  it('200 concurrent chats of 50 users against 10 platform slots: exactly 10 taken, none over a user’s 4', async () => {
    const config = gate({ CHAT_GLOBAL_SLOTS: 10 })
    const users = Array.from({ length: 50 }, () => crypto.randomUUID())
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => admit(config, ticket(users[i % 50]))))
    const admitted = results.filter((r) => r.admitted)
    expect(admitted).toHaveLength(10)
    expect(results.filter((r) => !r.admitted).every((r) => !r.admitted && ['global_slots', 'user_slots'].includes(r.reason))).toBe(true)
    expect((await slots(h, users[0], config)).global).toBe(10)
    for (const u of users) expect((await slots(h, u, config)).user).toBeLessThanOrEqual(4)
  })

  it('200 concurrent chats of mixed weight (1 and 2) against 25 slots: the admitted weights never exceed 25', async () => {
    const config = gate({ CHAT_GLOBAL_SLOTS: 25, CHAT_USER_SLOTS: 1000, CHAT_USER_PER_MINUTE: 100_000 })
    const user = crypto.randomUUID()
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => admit(config, ticket(user, i % 3 === 2 ? 2 : 1))))
    const weight = results.filter((r) => r.admitted).reduce((n, r) => n + r.ticket.weight, 0)
    expect(weight).toBeLessThanOrEqual(25)
    expect(weight).toBeGreaterThanOrEqual(24) // only a weight-2 chat can miss the last slot
    expect((await slots(h, user, config)).global).toBe(weight)
  })

  it('a released ticket frees its slots at once (both members of a weight-2 one); releasing twice changes nothing', async () => {
    const config = gate()
    const user = crypto.randomUUID()
    const heavy = ticket(user, 2)
    const light = [ticket(user), ticket(user)]
    for (const t of [heavy, ...light]) expect((await admit(config, t)).admitted).toBe(true)
    expect(await admit(config, ticket(user))).toMatchObject({ admitted: false, reason: 'user_slots' })
    await releaseTicket(h.services.kv, config, heavy)
    await releaseTicket(h.services.kv, config, heavy)
    expect((await slots(h, user, config)).user).toBe(2)
    expect((await admit(config, ticket(user, 2))).admitted).toBe(true)
  })

  it('an expired ticket frees its slots without a release; the refusal said when', async () => {
    const config = gate({ CHAT_TICKET_TTL_SEC: 1, CHAT_USER_SLOTS: 2 })
    const user = crypto.randomUUID()
    expect((await admit(config, ticket(user, 2))).admitted).toBe(true)
    expect(await admit(config, ticket(user))).toMatchObject({ admitted: false, reason: 'user_slots', retryAfterSeconds: 1 })
    await new Promise((r) => setTimeout(r, 1100))
    expect((await admit(config, ticket(user))).admitted).toBe(true)
  })

  it('the per-minute budgets count weights, per user and platform-wide, until the minute ends', async () => {
    await withinOneWindow(60, 5000)
    const config = gate({ CHAT_USER_PER_MINUTE: 5, CHAT_GLOBAL_PER_MINUTE: 8 })
    const [ann, ben] = [crypto.randomUUID(), crypto.randomUUID()]
    // Ann spends 5 slots (2 + 1 + 2), each ticket released at once: slots are free, the minute's budget is not.
    for (const w of [2, 1, 2]) {
      const t = ticket(ann, w)
      expect((await admit(config, t)).admitted).toBe(true)
      await releaseTicket(h.services.kv, config, t)
    }
    const minute = await admit(config, ticket(ann))
    expect(minute).toMatchObject({ admitted: false, status: 429, reason: 'user_minute' })
    const left = 60 - Math.floor((Date.now() % 60_000) / 1000)
    expect(Math.abs((minute as { retryAfterSeconds: number }).retryAfterSeconds - left)).toBeLessThanOrEqual(1)
    // Ben spends 3 of the platform's remaining 3; the 9th slot is refused platform-wide.
    for (let i = 0; i < 3; i++) expect((await admit(config, ticket(ben))).admitted).toBe(true)
    expect(await admit(config, ticket(ben))).toMatchObject({ admitted: false, reason: 'global_minute' })
  })
})

/** A runtime that holds every chat until `release()`: the admitted jobs keep their tickets for the whole burst. */
async function heldRuntime() {
  let release = () => {}
  const after = new Promise<void>((resolve) => (release = resolve))
  return { runtime: await chatRuntime({ ...echo(), after }), release }
}

describe('through POST /api/gateway/chat (the queue and the runtime for real)', () => {
  it('200 concurrent chats of one user: exactly 4 accepted (202), 196 refused with WORKLOAD_LIMIT', async () => {
    const { runtime: f, release } = await heldRuntime()
    const user = await h.seedUser('Burst', `burst-${crypto.randomUUID().slice(0, 8)}@example.com`)
    await seedChatAgent(h, user, f.url)
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(h, user, { message: `m${i}` })))
    const statuses = answers.map((r) => r.status)
    expect(statuses.filter((s) => s === 202)).toHaveLength(4)
    expect(statuses.filter((s) => s === 429)).toHaveLength(196)
    const refusal = await answers.find((r) => r.status === 429)!.json()
    expect(refusal).toMatchObject({ code: 'WORKLOAD_LIMIT', reason: 'user_slots' })
    expect((await slots(h, user.id)).user).toBe(4)
    // The four run and end: their slots come back.
    release()
    await waitFor(async () => (await slots(h, user.id)).user === 0, { ms: 15_000 })
    expect(f.hits.get('/api/gateway/chat')).toBe(4)
  }, 60_000)

  it('200 concurrent chats of 40 users against the platform’s 10 slots: exactly 10 accepted', async () => {
    const { runtime: f, release } = await heldRuntime()
    const users = await Promise.all(Array.from({ length: 40 }, (_, i) => h.seedUser(`Crowd${i}`, `crowd-${i}-${crypto.randomUUID().slice(0, 8)}@example.com`)))
    for (const u of users) await seedChatAgent(h, u, f.url)
    await waitFor(async () => (await slots(h, users[0].id)).global === 0, { ms: 15_000 })
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(h, users[i % 40], { message: `m${i}` })))
    const statuses = answers.map((r) => r.status)
    expect(statuses.filter((s) => s === 202)).toHaveLength(10)
    expect(statuses.filter((s) => s === 429)).toHaveLength(190)
    expect((await slots(h, users[0].id)).global).toBe(10)
    release()
    await waitFor(async () => (await slots(h, users[0].id)).global === 0, { ms: 15_000 })
  }, 60_000)
})
