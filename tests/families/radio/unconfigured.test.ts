import { afterEach, describe, expect, it, vi } from 'vitest'
import { configuredSchedules, registerSchedules } from '../../../infra/schedules'
import { parseConfig } from '../../../lib/config'
import type { Queue } from '../../../lib/context'
import { signDelivery } from '../../../lib/queue/sign'
import { useHarness } from '../../support/harness'

// Streaming left unconfigured (no MUX_TOKEN_ID / MUX_TOKEN_SECRET), as on a default `npm start`.
const KEY = 'radio-unconfigured-queue-key'
const EXPIRE_URL = 'http://127.0.0.1:8787/api/radio/expire'
const h = useHarness({ env: { QSTASH_CURRENT_SIGNING_KEY: KEY } })

const expire = async (body: unknown, key = KEY) => {
  const text = JSON.stringify(body)
  return h.web.request(EXPIRE_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery(key, EXPIRE_URL, text) },
    body: text,
  })
}

/** What `registerSchedules` asks the queue for. */
function schedulesRegistered(env: Record<string, string>) {
  const ids: string[] = []
  const queue: Queue = {
    publish: async () => ({ messageId: 'm' }),
    schedule: async (id) => {
      ids.push(id)
      return { scheduleId: id }
    },
  }
  return registerSchedules(queue, parseConfig(env)).then(() => ids)
}

afterEach(() => vi.restoreAllMocks())

describe('radio expiry sweep without Mux: no failing cron', () => {
  it('a default configuration does not schedule the sweep; the watchdog and heartbeat still are', async () => {
    expect(await schedulesRegistered({})).toEqual(['watchdog', 'heartbeat', 'chat-queued-sweep'])
    expect(configuredSchedules(parseConfig({ MUX_TOKEN_ID: 'id' })).map((s) => s.id)).not.toContain('radio-expiry-sweep')
  })

  it('with Mux configured the sweep is scheduled every ten minutes on the expiry receiver', async () => {
    expect(await schedulesRegistered({ MUX_TOKEN_ID: 'id', MUX_TOKEN_SECRET: 'secret' })).toEqual(['watchdog', 'heartbeat', 'chat-queued-sweep', 'radio-expiry-sweep'])
    const sweep = configuredSchedules(parseConfig({ MUX_TOKEN_ID: 'id', MUX_TOKEN_SECRET: 'secret' })).find((s) => s.id === 'radio-expiry-sweep')
    expect(sweep).toMatchObject({ path: '/api/radio/expire', cron: '*/10 * * * *', body: {} })
  })

  it('a sweep delivered anyway answers 200 with nothing ended, and logs nothing above debug', async () => {
    const lines: string[] = []
    for (const level of ['info', 'warn', 'error'] as const) vi.spyOn(console, level).mockImplementation((line) => void lines.push(String(line)))
    for (let i = 0; i < 3; i++) {
      const res = await expire({})
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ ok: true, ended: 0, failed: 0 })
    }
    expect(lines.filter((l) => l.includes('radio') || l.includes('"level":"error"'))).toEqual([])
  })

  it('a named session without Mux is still 503 `Streaming not configured` (retried by the queue)', async () => {
    const res = await expire({ sessionId: crypto.randomUUID() })
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Streaming not configured', code: 'NOT_CONFIGURED' })
  })

  it('a malformed body is 400; an unsigned or wrongly signed sweep is refused before anything runs', async () => {
    const bad = await expire({ sessionId: 5 })
    expect(bad.status).toBe(400)
    const forged = await expire({}, 'not-the-queue-key')
    expect(forged.status).toBe(401)
    const unsigned = await h.web.request(EXPIRE_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(unsigned.status).toBe(401)
  })
})
