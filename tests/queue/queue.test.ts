import { createServer } from 'node:http'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { LocalQueue } from '../../infra/local-queue'
import { QStashQueue, QStashVerifier } from '../../lib/queue/qstash'
import { signDelivery } from '../../lib/queue/sign'
import { DependencyUnavailableError, unavailableDependency } from '../../lib/http/dependency'
import { startFaultProxy, underFault, type FaultProxy } from '../support/fault-proxy'
import { waitFor } from '../support/wait'
import { listen, type Loopback } from '../support/loopback'
import { startQStashServer, type QStashServer } from '../support/qstash-server'

const CURRENT = 'sig_current_0123456789abcdef'
const NEXT = 'sig_next_0123456789abcdef'
const TOKEN = 'qstash-test-token'

interface Received {
  path: string
  body: string
  headers: Headers
  valid: boolean
}

/** Everything printed through the console from now on (until the test's mocks are restored), one entry a line. */
function captureConsole(): () => string[] {
  const lines: string[] = []
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      lines.push(...args.map(String).join(' ').split('\n'))
    })
  }
  return () => [...lines]
}

/** Signs a delivery as if it had been made `agoMs` in the past (its 5-minute expiry included). */
async function signAt(agoMs: number, key: string, url: string, body: string) {
  const now = Date.now()
  const spy = vi.spyOn(Date, 'now').mockReturnValue(now - agoMs)
  try {
    return await signDelivery(key, url, body)
  } finally {
    spy.mockRestore()
  }
}

describe('QStashQueue through a QStash-compatible server', () => {
  let qstash: QStashServer
  let receiver: Loopback
  let receiverUrl: string
  const received: Received[] = []
  let failNext = 0 // the receiver answers 500 to this many upcoming deliveries
  const verifier = new QStashVerifier(CURRENT, NEXT)

  beforeAll(async () => {
    qstash = await startQStashServer({ token: TOKEN, currentSigningKey: CURRENT, nextSigningKey: NEXT })
    // The app side: verifies each delivery against the URL it was reached at, as a handler would.
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', async () => {
        const body = Buffer.concat(chunks).toString('utf8')
        const signature = String(req.headers['upstash-signature'] ?? '')
        const valid = await verifier.verify(signature, body, `${receiverUrl}${req.url}`)
        const headers = new Headers(req.headers as Record<string, string>)
        received.push({ path: req.url ?? '', body, headers, valid })
        if (failNext > 0) {
          failNext--
          res.writeHead(500).end()
        } else res.writeHead(valid ? 200 : 401).end()
      })
    })
    receiver = await listen(server)
    receiverUrl = receiver.url
  })

  afterAll(async () => {
    await qstash?.close()
    await receiver?.close()
  })

  afterEach(() => {
    received.length = 0
    failNext = 0
    vi.restoreAllMocks()
  })

  const queue = () => new QStashQueue(TOKEN, receiverUrl, qstash.url)

  it('publishes and the receiver verifies a genuine delivery', async () => {
    const { messageId } = await queue().publish('/api/queue/chat', { hello: 'world' }, { retries: 2 })
    await vi.waitFor(() => expect(received).toHaveLength(1))
    const [d] = received
    expect(d.valid).toBe(true)
    expect(d.path).toBe('/api/queue/chat')
    expect(JSON.parse(d.body)).toEqual({ hello: 'world' })
    expect(d.headers.get('content-type')).toBe('application/json')
    expect(d.headers.get('upstash-message-id')).toBe(messageId)
    expect(d.headers.get('upstash-retried')).toBe('0')
    const sent = qstash.published.find((m) => m.messageId === messageId)!
    expect(sent.destination).toBe(`${receiverUrl}/api/queue/chat`)
    expect(sent.headers['upstash-retries']).toBe('2')
    expect(sent.state).toBe('delivered')
  })

  it('rejects tampered bodies, wrong URLs, foreign keys and expired tokens', async () => {
    await queue().publish('/api/queue/chat', { n: 1 })
    await vi.waitFor(() => expect(received).toHaveLength(1))
    const genuine = received[0]
    const signature = genuine.headers.get('upstash-signature')!
    const url = `${receiverUrl}/api/queue/chat`
    const post = (path: string, sig: string, body: string) =>
      fetch(`${receiverUrl}${path}`, { method: 'POST', headers: { 'Upstash-Signature': sig }, body })

    expect((await post('/api/queue/chat', signature, '{"n":2}')).status).toBe(401) // tampered body
    expect((await post('/api/queue/other', signature, genuine.body)).status).toBe(401) // signed for another URL
    expect((await post('/api/queue/chat', await signDelivery('sig_someone_else', url, genuine.body), genuine.body)).status).toBe(401)
    expect((await post('/api/queue/chat', await signAt(10 * 60_000, CURRENT, url, genuine.body), genuine.body)).status).toBe(401)
    expect(received.map((r) => r.valid)).toEqual([true, false, false, false, false])
    // The same checks straight on the verifier, including an empty signature.
    expect(await verifier.verify(signature, genuine.body, url)).toBe(true)
    expect(await verifier.verify('', genuine.body, url)).toBe(false)
  })

  it('accepts deliveries signed with the next key after QStash rotates', async () => {
    const rotated = qstash.rotateKeys()
    expect(rotated.current).toBe(NEXT)
    try {
      await queue().publish('/api/queue/chat', { rotated: true })
      await vi.waitFor(() => expect(received).toHaveLength(1))
      const d = received[0]
      expect(d.valid).toBe(true)
      // It passed on the next key: the current key alone would refuse it.
      const sig = d.headers.get('upstash-signature')!
      expect(await new QStashVerifier(CURRENT, CURRENT).verify(sig, d.body, `${receiverUrl}${d.path}`)).toBe(false)
    } finally {
      // Later tests expect signing with CURRENT again.
      await qstash.close()
      qstash = await startQStashServer({ token: TOKEN, currentSigningKey: CURRENT, nextSigningKey: NEXT })
    }
  })

  it('retries a failed delivery per Upstash-Retries', async () => {
    failNext = 2
    const { messageId } = await queue().publish('/api/queue/chat', { retry: true }, { retries: 3 })
    await vi.waitFor(() => expect(received).toHaveLength(3))
    expect(received.map((r) => r.headers.get('upstash-retried'))).toEqual(['0', '1', '2'])
    expect(received.every((r) => r.valid && r.headers.get('upstash-message-id') === messageId)).toBe(true)
    await vi.waitFor(() => expect(qstash.published.find((m) => m.messageId === messageId)!.state).toBe('delivered'))

    failNext = 100
    const gaveUp = await queue().publish('/api/queue/chat', { retry: false }, { retries: 1 })
    await vi.waitFor(() => expect(qstash.published.find((m) => m.messageId === gaveUp.messageId)!.state).toBe('failed'))
    expect(qstash.published.find((m) => m.messageId === gaveUp.messageId)!.attempts).toBe(2)
  })

  it('honours delay and deduplication ids', async () => {
    const started = Date.now()
    const first = await queue().publish('/api/queue/chat', { d: 1 }, { delaySec: 1, deduplicationId: 'job-1' })
    const dup = await queue().publish('/api/queue/chat', { d: 2 }, { deduplicationId: 'job-1' })
    expect(dup.messageId).toBe(first.messageId)
    await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 3000 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    expect(JSON.parse(received[0].body)).toEqual({ d: 1 })
    expect(qstash.published.find((m) => m.messageId === first.messageId)!.headers['upstash-delay']).toBe('1s')
  })

  it('creates schedules (same id replaces) whose deliveries verify', async () => {
    const q = queue()
    expect(await q.schedule('cleanup', '/api/queue/cleanup', '0 * * * *', { v: 1 })).toEqual({ scheduleId: 'cleanup' })
    await q.schedule('cleanup', '/api/queue/cleanup', '*/5 * * * *', { v: 2 })
    const s = qstash.schedules.get('cleanup')!
    expect(s).toMatchObject({ destination: `${receiverUrl}/api/queue/cleanup`, cron: '*/5 * * * *', body: '{"v":2}' })
    qstash.triggerSchedule('cleanup')
    await vi.waitFor(() => expect(received).toHaveLength(1))
    expect(received[0]).toMatchObject({ valid: true, body: '{"v":2}' })
    expect(received[0].headers.get('upstash-schedule-id')).toBe('cleanup')
    await expect(q.schedule('bad', '/api/queue/cleanup', 'not a cron')).rejects.toThrow()
  })

  it('refuses a wrong token: the refusal is thrown as it is (a request the queue refuses is not the queue being down)', async () => {
    const lines = captureConsole()
    const err = await new QStashQueue('wrong', receiverUrl, qstash.url).publish('/api/queue/chat', {}).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).message).toMatch(/Unauthorized/)
    expect(unavailableDependency(err)).toBeUndefined()
    expect(received).toHaveLength(0)
    expect(lines()).toEqual([]) // the SDK's own "failed with status 401" line is not printed
  })

  describe('QStash refusing connections, failing or never answering (behind the fault proxy)', () => {
    let proxy: FaultProxy
    beforeAll(async () => {
      proxy = await startFaultProxy({ target: qstash.url, mode: 'http' })
    })
    afterAll(() => proxy?.close())
    afterEach(() => proxy.set('pass'))
    const viaProxy = (timeoutMs = 2000) => new QStashQueue(TOKEN, receiverUrl, proxy.url, { timeoutMs })

    it('a refused connection is retried twice (100 ms, 300 ms), then `queue` unavailable; every line printed is one JSON event', async () => {
      const lines = captureConsole()
      const { value: err, ms } = await underFault(proxy, 'refuse', () => viaProxy().publish('/api/queue/chat', { n: 1 }).catch((e: unknown) => e))
      expect(err).toBeInstanceOf(DependencyUnavailableError)
      expect(unavailableDependency(err)).toBe('queue')
      expect(ms).toBeGreaterThanOrEqual(390)
      const events = lines().map((l) => JSON.parse(l))
      expect(events.map((e) => [e.event, e.attempt, e.retryInMs, e.route])).toEqual([
        ['queue.publish_retry', 1, 100, '/v2/publish'],
        ['queue.publish_retry', 2, 300, '/v2/publish'],
      ])
      expect(JSON.stringify(events)).not.toContain(receiverUrl) // the destination is not logged
      expect(qstash.published.some((m) => m.body === '{"n":1}')).toBe(false)
    })

    it('a publish retried after a refused connection goes through once QStash listens again, printing only JSON', async () => {
      const lines = captureConsole()
      await proxy.set('refuse')
      const publishing = viaProxy().publish('/api/queue/chat', { n: 2 })
      await waitFor(() => lines().length > 0, { what: 'the first retry', every: 10 })
      await proxy.set('pass')
      const { messageId } = await publishing
      expect(qstash.published.find((m) => m.messageId === messageId)?.body).toBe('{"n":2}')
      await vi.waitFor(() => expect(received.map((r) => r.body)).toContain('{"n":2}'))
      const all = lines()
      expect(all.length).toBeGreaterThan(0)
      for (const line of all) expect(JSON.parse(line)).toMatchObject({ level: 'warn', event: 'queue.publish_retry' })
    })

    it.each([
      ['blackholed', 'blackhole' as const],
      ['answering 503', { kind: 'status', status: 503 } as const],
    ])('%s: `queue` unavailable within the timeout, never retried, nothing printed', async (_name, fault) => {
      const lines = captureConsole()
      const { value: err, ms } = await underFault(proxy, fault, () => viaProxy(300).publish('/api/queue/chat', { n: 3 }).catch((e: unknown) => e))
      expect(unavailableDependency(err)).toBe('queue')
      expect(ms).toBeLessThan(1500)
      expect(lines()).toEqual([])
    })
  })
})

describe('LocalQueue', () => {
  const KEY = 'sig_local_0123456789abcdef'
  const PUBLIC = 'http://localhost:8787'
  const verifier = new QStashVerifier(KEY, 'sig_unused_next')
  let queues: LocalQueue[] = []

  afterEach(() => {
    for (const q of queues) q.close()
    queues = []
  })

  /** A LocalQueue whose `deliver` verifies each request and answers with `respond(attempt)`. */
  function setup(respond: (n: number) => number | Error = () => 200) {
    const received: Array<Received & { at: number }> = []
    const q = new LocalQueue({
      publicUrl: PUBLIC,
      signingKey: KEY,
      retryDelaysMs: [10, 20],
      deliver: async (req) => {
        const body = await req.text()
        const valid = await verifier.verify(req.headers.get('upstash-signature') ?? '', body, req.url)
        received.push({ path: new URL(req.url).pathname, body, headers: req.headers, valid, at: Date.now() })
        const r = respond(received.length)
        if (r instanceof Error) throw r
        return new Response(null, { status: r })
      },
    })
    queues.push(q)
    return { q, received }
  }

  it('delivers a signed JSON POST that the QStash verifier accepts', async () => {
    const { q, received } = setup()
    const { messageId } = await q.publish('/api/queue/chat', { hello: 'local' })
    await q.idle()
    expect(received).toHaveLength(1)
    const [d] = received
    expect(d).toMatchObject({ valid: true, path: '/api/queue/chat', body: '{"hello":"local"}' })
    expect(d.headers.get('content-type')).toBe('application/json')
    expect(d.headers.get('upstash-message-id')).toBe(messageId)
    expect(d.headers.get('upstash-retried')).toBe('0')
    // A different key must not verify it.
    expect(await new QStashVerifier('k1', 'k2').verify(d.headers.get('upstash-signature')!, d.body, `${PUBLIC}/api/queue/chat`)).toBe(false)
  })

  it('retries after a 500 and then succeeds', async () => {
    const { q, received } = setup((n) => (n === 1 ? 500 : 200))
    await q.publish('/api/queue/chat', { x: 1 })
    await q.idle()
    expect(received.map((r) => r.headers.get('upstash-retried'))).toEqual(['0', '1'])
    expect(received.every((r) => r.valid)).toBe(true)
  })

  it('gives up after `retries` (thrown errors count as failures)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const { q, received } = setup((n) => (n === 2 ? new Error('boom') : 503))
    await q.publish('/api/queue/chat', { x: 1 }, { retries: 2 })
    await q.idle()
    expect(received.map((r) => r.headers.get('upstash-retried'))).toEqual(['0', '1', '2'])
    await new Promise((r) => setTimeout(r, 100))
    expect(received).toHaveLength(3)
    warn.mockRestore()
  })

  it('honours deduplication ids', async () => {
    const { q, received } = setup()
    const a = await q.publish('/api/queue/chat', { n: 1 }, { deduplicationId: 'once' })
    const b = await q.publish('/api/queue/chat', { n: 2 }, { deduplicationId: 'once' })
    await q.publish('/api/queue/chat', { n: 3 }, { deduplicationId: 'other' })
    expect(b.messageId).toBe(a.messageId)
    await q.idle()
    // deliveries run concurrently: compare as a set
    expect(received.map((r) => JSON.parse(r.body).n).sort()).toEqual([1, 3])
  })

  it('honours delaySec, and idle() waits for delayed deliveries', async () => {
    const { q, received } = setup()
    const started = Date.now()
    await q.publish('/api/queue/chat', {}, { delaySec: 1 })
    await new Promise((r) => setTimeout(r, 300))
    expect(received).toHaveLength(0)
    await q.idle()
    expect(received).toHaveLength(1)
    expect(received[0].at - started).toBeGreaterThanOrEqual(950)
  })

  it('runs a per-second cron schedule (same id replaces) until close()', async () => {
    const { q, received } = setup()
    await q.schedule('tick', '/api/queue/tick', '* * * * * *', { v: 1 })
    await q.schedule('tick', '/api/queue/tick', '* * * * * *', { v: 2 })
    await vi.waitFor(() => expect(received.length).toBeGreaterThanOrEqual(2), { timeout: 4000, interval: 50 })
    // One schedule, not two: ticks are about a second apart and all carry the replacing body.
    expect(received[1].at - received[0].at).toBeGreaterThan(200)
    expect(received.every((r) => r.valid && r.body === '{"v":2}' && r.headers.get('upstash-schedule-id') === 'tick')).toBe(true)
    q.close()
    const count = received.length
    await new Promise((r) => setTimeout(r, 1300))
    expect(received).toHaveLength(count)
    expect((q as unknown as { timers: Set<unknown> }).timers.size).toBe(0)
    await expect(q.schedule('bad', '/api/queue/tick', 'not a cron')).rejects.toThrow()
  })

  it('close() drops pending deliveries and clears their timers', async () => {
    const { q, received } = setup()
    await q.publish('/api/queue/chat', {}, { delaySec: 60 })
    q.close()
    await q.idle() // resolves: nothing pending any more
    expect(received).toHaveLength(0)
    expect((q as unknown as { timers: Set<unknown> }).timers.size).toBe(0)
  })
})
