import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleFunction } from '../../infra/bundle'
import { type DurableNamespaceLike, SESSION_HEADER, TARGET_HEADER } from '../../lib/logs/backend'
import type { LogEvent } from '../../lib/logs/tail'
import { startRailwayServer, type RailwayServer } from '../support/railway-server'

// The logs Worker's Durable Object in workerd, as deployed: its bundle, the LOG_TAILS binding of wrangler.toml,
// and its runtime provider built from the env (Railway, here the fake GraphQL server of tests/support).
const TOKEN = 'railway-token'
let railway: RailwayServer
let mf: Miniflare
beforeAll(async () => {
  railway = await startRailwayServer({ token: TOKEN, projectId: 'proj-1', environmentId: 'env-1' })
  const { code } = await bundleFunction(new URL('../../functions/logs/index.ts', import.meta.url).pathname)
  mf = new Miniflare({
    modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }],
    compatibilityDate: '2026-04-01',
    durableObjects: { LOG_TAILS: 'LogTailObject' },
    bindings: {
      APP_ORIGIN: 'http://localhost:3000',
      SESSION_SECRET: 'smoke-secret',
      RUNTIME_PROVIDER_TOKEN: TOKEN,
      RAILWAY_PROJECT_ID: 'proj-1',
      RAILWAY_ENVIRONMENT_ID: 'env-1',
      RAILWAY_API_URL: railway.url,
    },
  })
})
afterAll(async () => {
  await mf?.dispose()
  await railway?.close()
})

async function readEvents(body: ReadableStream<Uint8Array>, until: (events: LogEvent[]) => boolean, timeoutMs: number) {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const events: LogEvent[] = []
  let buf = ''
  const deadline = setTimeout(() => void reader.cancel(), timeoutMs)
  try {
    while (!until(events)) {
      const { done, value } = await reader.read()
      if (done) break
      buf += decoder.decode(value, { stream: true })
      let cut: number
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut)
        buf = buf.slice(cut + 2)
        events.push(JSON.parse(block.split('\n').find((l) => l.startsWith('data: '))!.slice(6)))
      }
    }
  } finally {
    clearTimeout(deadline)
  }
  return { events, reader }
}

describe('LogTailObject in workerd', () => {
  it('tails a Railway runtime: buffered lines, a new line from the next poll, history, status, stop → exit', { timeout: 30_000 }, async () => {
    const agentId = 'agent-do-1'
    const { service, deployment } = railway.seedService(`agent-${agentId}`)
    railway.log(deployment.id, 'first line')
    // miniflare types the namespace with workers-types, which this project does not install
    const ns = (await mf.getDurableObjectNamespace('LOG_TAILS')) as unknown as DurableNamespaceLike
    const stub = ns.get(ns.idFromName(agentId))
    const target = JSON.stringify({ agentId, name: `agent-${agentId}`, serviceId: service.id, url: null, gatewayToken: null })
    const session = JSON.stringify({ userId: 'user-1', sessionHash: 'session-1', expiresAt: Date.now() + 3600_000 })
    const res = await stub.fetch(`https://log-tail.internal/${agentId}/stream`, { headers: { [TARGET_HEADER]: target, [SESSION_HEADER]: session } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)

    // A new line is picked up by the next deploymentLogs poll (5 s on Railway).
    setTimeout(() => railway.log(deployment.id, 'second line'), 200)
    const { events, reader } = await readEvents(res.body as ReadableStream<Uint8Array>, (e) => e.some((x) => x.text === 'second line'), 15_000)
    expect(events.map((e) => [e.type, e.text])).toEqual([
      ['connected', 'Connected to the log stream'],
      ['line', 'first line'],
      ['line', 'second line'],
    ])
    expect(events.every((e) => e.agentId === agentId)).toBe(true)

    const history = (await (await stub.fetch(`https://log-tail.internal/${agentId}/history`)).json()) as { active: boolean; lines: Array<{ text: string }> }
    expect(history.active).toBe(true)
    expect(history.lines.map((l) => l.text)).toEqual(['first line', 'second line'])
    const status = (await (await stub.fetch(`https://log-tail.internal/${agentId}/status`)).json()) as { tail: { clients: number } | null }
    expect(status.tail).toMatchObject({ agentId, clients: 1, bufferedLines: 2 })

    const stop = await stub.fetch(`https://log-tail.internal/${agentId}/stop`, { method: 'POST' })
    expect(await stop.json()).toEqual({ stopped: true })
    const rest: LogEvent[] = []
    const decoder = new TextDecoder()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      for (const block of decoder.decode(value).split('\n\n').filter(Boolean)) rest.push(JSON.parse(block.split('\n').find((l) => l.startsWith('data: '))!.slice(6)))
    }
    expect(rest).toEqual([{ type: 'exit', agentId, text: 'Log tail stopped', code: 0 }])
    const after = (await (await stub.fetch(`https://log-tail.internal/${agentId}/status`)).json()) as { tail: unknown }
    expect(after.tail).toBeNull()
    expect(railway.rejected).toEqual([])
  })

  it('a stream ends when the Worker that ended its session tells the object; the user’s other stream runs on', { timeout: 30_000 }, async () => {
    const agentId = 'agent-do-2'
    const { service } = railway.seedService(`agent-${agentId}`)
    const ns = (await mf.getDurableObjectNamespace('LOG_TAILS')) as unknown as DurableNamespaceLike
    const stub = ns.get(ns.idFromName('user-2'))
    const target = JSON.stringify({ agentId, name: `agent-${agentId}`, serviceId: service.id, url: null, gatewayToken: null })
    const open = (sessionHash: string) =>
      stub.fetch(`https://log-tail.internal/${agentId}/stream`, {
        headers: { [TARGET_HEADER]: target, [SESSION_HEADER]: JSON.stringify({ userId: 'user-2', sessionHash, expiresAt: Date.now() + 3600_000 }) },
      })
    const [ending, staying] = [await open('ends'), await open('stays')]
    const first = await readEvents(ending.body as ReadableStream<Uint8Array>, (e) => e.some((x) => x.type === 'connected'), 10_000)
    const told = await stub.fetch('https://log-tail.internal/sessions-ended', { method: 'POST', body: JSON.stringify({ userId: 'user-2', sessionHashes: ['ends'] }) })
    expect(await told.json()).toEqual({ closed: 1 })
    const rest: LogEvent[] = []
    const decoder = new TextDecoder()
    for (;;) {
      const { done, value } = await first.reader.read()
      if (done) break
      for (const block of decoder.decode(value).split('\n\n').filter(Boolean)) rest.push(JSON.parse(block.split('\n').find((l) => l.startsWith('data: '))!.slice(6)))
    }
    expect(rest).toEqual([{ type: 'exit', agentId, text: 'Session ended: sign in again', code: 0 }])
    const status = (await (await stub.fetch(`https://log-tail.internal/${agentId}/status`)).json()) as { tail: { clients: number } | null }
    expect(status.tail).toMatchObject({ clients: 1 })
    await (staying.body as ReadableStream<Uint8Array>).cancel()
  })
})
