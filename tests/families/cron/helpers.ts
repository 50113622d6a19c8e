import { asc, eq } from 'drizzle-orm'
import type { LocalQueue } from '../../../infra/local-queue'
import { signDelivery } from '../../../lib/queue/sign'
import type { PublishOptions, Queue } from '../../../lib/context'
import type { RuntimeProvider } from '../../../lib/runtime/provider'
import { checkAgents } from '../../../functions/cron/watchdog/batch'
import { watchdogDeps, type WatchdogDeps } from '../../../lib/watchdog/deps'
import { sweep } from '../../../functions/cron/watchdog/sweep'
import { agentEvents, agents, agentWatchdog, mailOutbox } from '../../../schema'
import type { Harness, SeededUser } from '../../support/harness'

export const QUEUE_KEY = 'cron-family-queue-key'
export const WATCHDOG_URL = 'http://127.0.0.1:8787/api/cron/watchdog'

/** A signed delivery to the watchdog receiver, as QStash (or the in-process queue) sends it. */
export async function deliver(h: Harness, body: unknown, key = QUEUE_KEY) {
  const text = JSON.stringify(body)
  return h.web.request(WATCHDOG_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(key, WATCHDOG_URL, text) },
    body: text,
  })
}

/** The in-process queue the harness's web app publishes to (deliveries reach the same app, signed). */
export const localQueue = (h: Harness) => h.services.queue as LocalQueue

export interface Published {
  path: string
  body: any
  opts?: PublishOptions
}

/** A queue that keeps what the watchdog publishes, for the test to deliver when its clock says so. */
export function recordingQueue(): Queue & { published: Published[] } {
  const published: Published[] = []
  return {
    published,
    async publish(path, body, opts) {
      published.push({ path, body, opts })
      return { messageId: `msg_${published.length}` }
    },
    async schedule(id) {
      return { scheduleId: id }
    },
  }
}

/** A clock the test moves. */
export function testClock(start = Date.parse('2026-03-02T10:00:00Z')) {
  let t = start
  return {
    now: () => t,
    advance: (ms: number) => (t += ms),
  }
}

/**
 * The watchdog on the harness's stores with the test's clock and a recording queue; `runtimes` stands in for the
 * provider when the agents' runtimes are fake servers no provider knows (what it leaves out is the harness's).
 */
export function engine(h: Harness, opts: { runtimes?: Partial<Pick<RuntimeProvider, 'repair' | 'stop'>>; start?: number } = {}) {
  const clock = testClock(opts.start)
  const queue = recordingQueue()
  const own = h.services.runtimes
  const runtimes = opts.runtimes ? { repair: own.repair.bind(own), stop: own.stop.bind(own), ...opts.runtimes } : undefined
  const deps: WatchdogDeps = watchdogDeps(h.services, { now: clock.now, queue, ...(runtimes ? { runtimes } : {}) })
  return {
    clock,
    queue,
    deps,
    check: (ids: string[]) => checkAgents(deps, ids),
    sweep: () => sweep(deps),
  }
}

/** An agent record whose runtime is at `url` (a fake runtime), as provisioning leaves it. */
export async function seedAgent(h: Harness, user: SeededUser, url: string | null, over: Partial<typeof agents.$inferInsert> = {}) {
  const [agent] = await h.db
    .insert(agents)
    .values({ userId: user.id, name: `agent-${crypto.randomUUID().slice(0, 8)}`, plan: 'solo', status: 'running', runtimeProvider: 'local', runtimeServiceId: `svc-${crypto.randomUUID()}`, runtimeUrl: url, ...over })
    .returning()
  return agent
}

export async function watchRow(h: Harness, agentId: string) {
  const [row] = await h.db.select().from(agentWatchdog).where(eq(agentWatchdog.agentId, agentId))
  return row
}

/** The agent's watchdog transitions, oldest first, as `from→to`. */
export async function transitions(h: Harness, agentId: string, kind = 'watchdog') {
  const rows = await h.db.select().from(agentEvents).where(eq(agentEvents.agentId, agentId)).orderBy(asc(agentEvents.at), asc(agentEvents.id))
  return rows.filter((r) => r.kind === kind).map((r) => `${r.fromState ?? '∅'}→${r.toState}`)
}

export async function crashMails(h: Harness, to: string) {
  const rows = await h.db.select().from(mailOutbox).where(eq(mailOutbox.to, to.toLowerCase()))
  return rows.filter((r) => r.kind === 'agent-crash-loop')
}

/** What a runtime answers when it is down in a way that still answers: every probe 500. */
export const BROKEN = { '/healthz': { status: 500, raw: 'boom' }, '/readyz': { status: 500, raw: 'boom' }, '/api/status': { status: 500, raw: 'boom' } }
