import { eq } from 'drizzle-orm'
import type { LocalQueue } from '../../../infra/local-queue'
import { CHAT_QUEUE_PATH } from '../../../functions/chat/jobs'
import { gateKeys } from '../../../functions/chat/workload'
import type { Config } from '../../../lib/config'
import { defineScript } from '../../../lib/kv/script'
import { signDelivery } from '../../../lib/queue/sign'
import { agents, chatJobs, type Agent } from '../../../schema'
import { startFakeRuntime, type FakeAnswer, type FakeRuntime } from '../../support/fake-runtime'
import { createHarness, type Harness, PAYING, type SeededUser } from '../../support/harness'
import { call, freshIp } from '../../support/requests'
import { seedAgent } from '../instance/helpers'

export const QUEUE_KEY = 'chat-family-queue-key'
export const CHAT_URL = `http://127.0.0.1:8787${CHAT_QUEUE_PATH}`

/**
 * A harness for chat: the in-process queue signs with QUEUE_KEY (so a test can sign deliveries itself), and the
 * workload gate's keys are this harness's own (parallel files share one Redis in the integration project).
 */
export const chatHarness = (env: Record<string, string> = {}) =>
  createHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: QUEUE_KEY, CHAT_GATE_NAMESPACE: `t-${crypto.randomUUID().slice(0, 8)}`, ...env }, plan: PAYING })

/** The in-process queue the harness's web app publishes to (deliveries reach the same app, signed). */
export const localQueue = (h: Harness) => h.services.queue as LocalQueue

/** What a runtime's gateway answers to a chat: the echo the local runtime gives. */
export const echo = (text = 'hi', sessionId = 'dashboard'): FakeAnswer => ({ body: { sessionId, reply: `Echo: ${text}` } })

export const runtimes: FakeRuntime[] = []
/** A fake runtime answering the gateway chat path with `chat` (one answer, or one per request). */
export async function chatRuntime(chat: FakeAnswer | FakeAnswer[] = echo(), more: Record<string, FakeAnswer> = {}) {
  const f = await startFakeRuntime({ '/api/gateway/chat': chat, ...more })
  runtimes.push(f)
  return f
}
export const closeRuntimes = () => Promise.all(runtimes.splice(0).map((f) => f.close()))

/** An agent of `user` whose runtime is at `url`, provisioned (service id, URL, sealed gateway token), `running`. */
export const seedChatAgent = (h: Harness, user: SeededUser, url: string | null, over: Partial<typeof agents.$inferInsert> = {}): Promise<Agent> =>
  seedAgent(h, user, { runtimeServiceId: `svc-${crypto.randomUUID()}`, runtimeUrl: url, runtimeProvider: 'local', ...over })

/** A user with a chat agent on its own fake runtime. */
export async function chatUser(h: Harness, chat?: FakeAnswer | FakeAnswer[]) {
  const user = await h.seedUser('Chatter', `chat-${crypto.randomUUID().slice(0, 8)}@example.com`)
  const runtime = await chatRuntime(chat)
  const agent = await seedChatAgent(h, user, runtime.url)
  return { user, runtime, agent }
}

/** A signed queue delivery of `jobId` to the receiver, as the queue's `retried`-th retry. */
export async function deliver(h: Harness, jobId: string, retried = 0, key = QUEUE_KEY) {
  const text = JSON.stringify({ jobId })
  return h.web.request(CHAT_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(key, CHAT_URL, text), 'upstash-retried': String(retried) },
    body: text,
  })
}

export async function jobRow(h: Harness, jobId: string) {
  const [row] = await h.db.select().from(chatJobs).where(eq(chatJobs.id, jobId))
  return row
}

/** A job stored as `POST /api/gateway/chat` stores it, without publishing it (claims, redeliveries). */
export async function seedJob(h: Harness, user: SeededUser, agent: Agent, over: Partial<typeof chatJobs.$inferInsert> = {}) {
  const [row] = await h.db.insert(chatJobs).values({ userId: user.id, agentId: agent.id, message: 'hello', ...over }).returning()
  return row
}

/** Slots in use in a set of the gate (expired tickets dropped first), read atomically as the gate reads them. */
const slotsInUse = defineScript<number>({
  name: 'test-chat-slots',
  lua: `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZCARD', KEYS[1])`,
  local(store, [key], [now]) {
    store.zremrangebyscore(key, -Infinity, Number(now))
    return store.zcard(key)
  },
})

/** A user's and the platform's slots in use in the gate of `config` (default the harness's). */
export async function slots(h: Harness, userId: string, config: Pick<Config, 'CHAT_GATE_NAMESPACE'> = h.services.config) {
  const k = gateKeys(config.CHAT_GATE_NAMESPACE, userId)
  const now = Date.now()
  return { user: await h.services.kv.eval(slotsInUse, [k.userSlots], [now]), global: await h.services.kv.eval(slotsInUse, [k.globalSlots], [now]) }
}

/** `POST /api/gateway/chat` as the dashboard sends it, from a client address of its own (the per-IP limit). */
export const chat = (h: Harness, user: SeededUser | undefined, body: unknown, headers: Record<string, string> = {}) =>
  call(h, 'POST', '/api/gateway/chat', { user, body, headers: { 'cf-connecting-ip': freshIp(), ...headers } })

/** `POST /api/jobs/:jobId/claim` with the session of `user` (or `opts.key`, an API key, instead). */
export function claim(h: Harness, user: SeededUser, jobId: string, claimerAgentId: string, opts: { key?: string } = {}) {
  return jobCall(h, user, `/api/jobs/${jobId}/claim`, { claimerAgentId }, opts)
}

/** `POST /api/jobs/:jobId/complete` (`body` as sent) with the session of `user`, or `opts.key`. */
export function complete(h: Harness, user: SeededUser, jobId: string, body: unknown, opts: { key?: string } = {}) {
  return jobCall(h, user, `/api/jobs/${jobId}/complete`, body, opts)
}

/** `POST /api/jobs/:jobId/fail` (`body` as sent) with the session of `user`, or `opts.key`. */
export function failJob(h: Harness, user: SeededUser, jobId: string, body: unknown, opts: { key?: string } = {}) {
  return jobCall(h, user, `/api/jobs/${jobId}/fail`, body, opts)
}

function jobCall(h: Harness, user: SeededUser, path: string, body: unknown, opts: { key?: string }) {
  if (!opts.key) return call(h, 'POST', path, { user, body })
  return h.web.request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.key}`, 'content-type': 'application/json', 'cf-connecting-ip': freshIp() },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** Claims `job` for `agent`; answers the claim's body (its `leaseId`, `leaseExpiresAt`). */
export async function claimed(h: Harness, user: SeededUser, jobId: string, agentId: string) {
  const res = await claim(h, user, jobId, agentId)
  if (res.status !== 200) throw new Error(`claim refused: ${res.status} ${await res.text()}`)
  return (await res.json()) as { leaseId: string; leaseExpiresAt: string; claimedAt: string; claimedByAgentId: string; status: string }
}

/** The default lease (CHAT_JOB_LEASE_SEC), in ms. */
export const LEASE_MS = 300_000
