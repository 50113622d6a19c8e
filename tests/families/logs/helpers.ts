import { expect } from 'vitest'
import { provisionAgent } from '../../../lib/agents/provision'
import type { LogEvent } from '../../../lib/logs/tail'
import { agents } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import type { Harness, SeededUser } from '../../support/harness'
import { call } from '../../support/requests'

/** A paying user's agent with a real local runtime process (lib/agents/provision.ts → LocalRuntimeProvider). */
export async function provisionedAgent(h: Harness, user: SeededUser, name: string) {
  await setPlan(h.db, user.id, 'network', `sub_${name}`)
  const agent = await provisionAgent(h.services, { userId: user.id, plan: 'network', name })
  expect(agent.runtimeUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  return agent
}

/** An agent record with no runtime behind it (creation failed). */
export async function agentWithoutRuntime(h: Harness, user: SeededUser, name: string) {
  const [row] = await h.db.insert(agents).values({ userId: user.id, name, status: 'error', statusReason: 'Runtime creation failed' }).returning()
  return row
}

/** Makes the runtime write one log line: it logs every request it answers, with its path. */
export async function touchRuntime(url: string, path: string) {
  const res = await fetch(`${url}${path}`)
  await res.arrayBuffer()
}

export interface SseClient {
  status: number
  contentType: string | null
  events: LogEvent[]
  /** The first event (from `from` on) that `match` accepts; fails after `timeoutMs`. */
  next(match: (e: LogEvent) => boolean, timeoutMs?: number, from?: number): Promise<LogEvent>
  /** Resolves when the server closed the stream. */
  closed: Promise<void>
  /** The client goes away (cancels the body). */
  close(): Promise<void>
}

const opened: SseClient[] = []

/** Connects to `/api/logs/:agentId/stream` as `user` and parses its server-sent events as they come. */
export async function connect(h: Harness, user: SeededUser, agentId: string, env?: Record<string, unknown>): Promise<SseClient> {
  const res = env
    ? await h.web.request(`/api/logs/${agentId}/stream`, { headers: { cookie: user.cookie } }, env)
    : await call(h, 'GET', `/api/logs/${agentId}/stream`, { user })
  const events: LogEvent[] = []
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const w of [...waiters]) w()
  }
  let serverClosed = false
  let closedResolve!: () => void
  const closed = new Promise<void>((r) => (closedResolve = r))
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buf = ''
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        buf += decoder.decode(value, { stream: true })
        let cut: number
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut)
          buf = buf.slice(cut + 2)
          const type = /^event: (.*)$/m.exec(block)?.[1]
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n')
          const event = JSON.parse(data) as LogEvent
          expect(event.type).toBe(type)
          events.push(event)
        }
        notify()
      }
    } catch {
      // cancelled by close()
    } finally {
      serverClosed = true
      closedResolve()
      notify()
    }
  })()
  const client: SseClient = {
    status: res.status,
    contentType: res.headers.get('content-type'),
    events,
    closed,
    next(match, timeoutMs = 5000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.slice(from).find(match)
          if (found) return done(() => resolve(found))
          if (serverClosed) return done(() => reject(new Error(`stream closed; events: ${JSON.stringify(events.slice(-5))}`)))
        }
        const timer = setTimeout(() => done(() => reject(new Error(`no matching event in ${timeoutMs} ms; last: ${JSON.stringify(events.slice(-3))}`))), timeoutMs)
        const done = (fn: () => void) => {
          clearTimeout(timer)
          waiters.delete(check)
          fn()
        }
        waiters.add(check)
        check()
      })
    },
    async close() {
      if (!serverClosed) await reader.cancel().catch(() => {})
      await closed
    },
  }
  opened.push(client)
  return client
}

/** Closes every stream a test left open (afterAll, before `h.close()`), so vitest can exit. */
export async function closeAllStreams() {
  await Promise.all(opened.splice(0).map((c) => c.close()))
}

/** Waits until `check` holds, polling every 20 ms, for at most `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const v = await check()
    if (ok(v) || Date.now() > until) return v
    await new Promise((r) => setTimeout(r, 20))
  }
}

export const active = async (h: Harness, user: SeededUser) => {
  const res = await call(h, 'GET', '/api/logs/active', { user })
  expect(res.status).toBe(200)
  return ((await res.json()) as { tails: Array<{ agentId: string; clients: number; bufferedLines: number; startedAt: string }> }).tails
}

export const history = async (h: Harness, user: SeededUser, agentId: string) => {
  const res = await call(h, 'GET', `/api/logs/${agentId}/history`, { user })
  expect(res.status).toBe(200)
  return (await res.json()) as { agentId: string; active: boolean; lines: Array<{ timestamp: string; stream: string; text: string }> }
}
