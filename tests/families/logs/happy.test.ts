import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Agent } from '../../../schema'
import { logTails } from '../../../lib/logs/tail'
import { useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { active, closeAllStreams, connect, eventually, history, provisionedAgent, touchRuntime } from './helpers'

let agent: Agent
const h = useHarness()
beforeAll(async () => {
  // The spec's 30 s grace, shortened for the tests (the registry's only injectable setting).
  logTails(h.services.runtimes).options.graceMs = 300
  agent = await provisionedAgent(h, h.users.alice, 'logs-happy')
})
afterAll(() => closeAllStreams())

const marker = () => `/log-probe-${crypto.randomUUID()}`

describe('live log tail: a real local runtime', () => {
  it('streams `connected`, then a line the runtime writes, as server-sent events with JSON data {type, agentId, text, code}', async () => {
    const client = await connect(h, h.users.alice, agent.id)
    expect(client.status).toBe(200)
    expect(client.contentType).toMatch(/^text\/event-stream/)
    const connected = await client.next((e) => e.type === 'connected')
    expect(connected).toEqual({ type: 'connected', agentId: agent.id, text: 'Connected to the log stream', code: null })

    const path = marker()
    await touchRuntime(agent.runtimeUrl!, path)
    const line = await client.next((e) => e.type === 'line' && e.text.includes(path))
    expect(Object.keys(line).sort()).toEqual(['agentId', 'code', 'text', 'type'])
    expect(line).toMatchObject({ type: 'line', agentId: agent.id, code: null })
    expect(JSON.parse(line.text)).toMatchObject({ event: 'request', path, status: 404 })

    // history holds what the tail buffered, and `active` lists the tail with its one client
    const hist = await history(h, h.users.alice, agent.id)
    expect(hist.active).toBe(true)
    expect(hist.lines.some((l) => l.text.includes(path) && l.stream === 'stdout' && !Number.isNaN(Date.parse(l.timestamp)))).toBe(true)
    expect(await active(h, h.users.alice)).toEqual([{ agentId: agent.id, clients: 1, bufferedLines: hist.lines.length, startedAt: expect.any(String) }])

    await client.close()
  })

  it('two clients share one tail: both get the same new line, one tail listed with two clients', async () => {
    await eventually(() => active(h, h.users.alice), (t) => t.length === 0, 3000) // the previous test's tail ended
    const a = await connect(h, h.users.alice, agent.id)
    const b = await connect(h, h.users.alice, agent.id)
    await Promise.all([a.next((e) => e.type === 'connected'), b.next((e) => e.type === 'connected')])
    const tails = await active(h, h.users.alice)
    expect(tails).toHaveLength(1)
    expect(tails[0].clients).toBe(2)

    const path = marker()
    await touchRuntime(agent.runtimeUrl!, path)
    const [la, lb] = await Promise.all([a.next((e) => e.text.includes(path)), b.next((e) => e.text.includes(path))])
    expect(la).toEqual(lb)
    // the line reached both once: one read of the runtime's logs, not one per client
    expect(a.events.filter((e) => e.text.includes(path))).toHaveLength(1)
    expect(b.events.filter((e) => e.text.includes(path))).toHaveLength(1)
    expect((await history(h, h.users.alice, agent.id)).lines.filter((l) => l.text.includes(path))).toHaveLength(1)

    // a client joining late is replayed the buffer after `connected`
    const late = await connect(h, h.users.alice, agent.id)
    await late.next((e) => e.text.includes(path))
    expect(late.events[0].type).toBe('connected')
    expect((await active(h, h.users.alice))[0]).toMatchObject({ clients: 3, startedAt: tails[0].startedAt })
    await Promise.all([a.close(), b.close(), late.close()])
  })

  it('the last client leaving ends the tail after the grace; a client back within it finds the same tail', async () => {
    await eventually(() => active(h, h.users.alice), (t) => t.length === 0, 3000)
    const first = await connect(h, h.users.alice, agent.id)
    await first.next((e) => e.type === 'connected')
    const [{ startedAt }] = await active(h, h.users.alice)
    await first.close()
    // within the grace: still running, no clients; a new client rejoins it
    const during = await active(h, h.users.alice)
    expect(during).toEqual([expect.objectContaining({ agentId: agent.id, clients: 0, startedAt })])
    const again = await connect(h, h.users.alice, agent.id)
    await again.next((e) => e.type === 'connected')
    expect((await active(h, h.users.alice))[0]).toMatchObject({ clients: 1, startedAt })
    await again.close()

    const t0 = Date.now()
    const after = await eventually(() => active(h, h.users.alice), (t) => t.length === 0, 3000)
    expect(after).toEqual([])
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200)
    expect(await history(h, h.users.alice, agent.id)).toEqual({ agentId: agent.id, active: false, lines: [] })
  })

  it('stop ends the tail: every client gets `exit` with code 0 and its stream closes', async () => {
    const a = await connect(h, h.users.alice, agent.id)
    const b = await connect(h, h.users.alice, agent.id)
    await Promise.all([a.next((e) => e.type === 'connected'), b.next((e) => e.type === 'connected')])
    const res = await call(h, 'POST', `/api/logs/${agent.id}/stop`, { user: h.users.alice })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ agentId: agent.id, stopped: true })
    for (const client of [a, b]) {
      const exit = await client.next((e) => e.type === 'exit')
      expect(exit).toEqual({ type: 'exit', agentId: agent.id, text: 'Log tail stopped', code: 0 })
      await client.closed
      expect(client.events.at(-1)).toEqual(exit)
    }
    expect(await active(h, h.users.alice)).toEqual([])
    // stopping again: nothing runs
    const again = await call(h, 'POST', `/api/logs/${agent.id}/stop`, { user: h.users.alice })
    expect(await again.json()).toEqual({ agentId: agent.id, stopped: false })
  })

  it('history holds the last 500 lines only', async () => {
    const client = await connect(h, h.users.alice, agent.id)
    await client.next((e) => e.type === 'connected')
    const paths = Array.from({ length: 520 }, (_, i) => `/log-fill-${i}-${crypto.randomUUID().slice(0, 8)}`)
    for (let i = 0; i < paths.length; i += 20) await Promise.all(paths.slice(i, i + 20).map((p) => touchRuntime(agent.runtimeUrl!, p)))
    await client.next((e) => e.text.includes(paths.at(-1)!), 10_000)
    const hist = await history(h, h.users.alice, agent.id)
    expect(hist.lines).toHaveLength(500)
    expect(hist.lines.some((l) => l.text.includes(paths.at(-1)!))).toBe(true)
    expect(hist.lines.some((l) => l.text.includes(paths[0]))).toBe(false) // pushed out of the ring
    expect((await active(h, h.users.alice))[0].bufferedLines).toBe(500)
    await client.close()
  })
})
