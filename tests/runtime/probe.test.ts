import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CHECK_TIMEOUT_MS, checkRuntime, PROBE_TIMEOUTS_MS, probeRuntime, type ProbePath } from '../../lib/runtime/probe'
import type { FakeAnswer } from '../support/fake-runtime'
import { type FakeRuntime, HEALTHY, startFakeRuntime } from '../support/fake-runtime'

// Real HTTP servers on loopback; each test sets the three answers. Timeouts are injected short.
let rt: FakeRuntime
const short = { '/healthz': 300, '/readyz': 300, '/api/status': 300 }
const probe = () => probeRuntime(rt.url, { timeouts: short })
const reasons = (r: Awaited<ReturnType<typeof probe>>) => Object.fromEntries(r.probeChecks.map((c) => [c.path, c.reason]))

beforeAll(async () => {
  rt = await startFakeRuntime()
})
afterEach(() => {
  for (const p of ['/healthz', '/readyz', '/api/status']) rt.set(p, undefined)
})
afterAll(() => rt.close())

describe('classification table, /api/status 200 (authoritative)', () => {
  it('configured false → setup, whatever the legacy probes say', async () => {
    rt.set('/api/status', { body: { configured: false, running: true, state: 'running', version: '1.0.0', uptime: '5s' } })
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    const r = await probe()
    expect(r.status).toBe('setup')
    expect(r.statusReason).toMatch(/not configured/)
  })

  it('running true → running even when both legacy probes 404', async () => {
    rt.set('/api/status', HEALTHY.status())
    const r = await probe()
    expect(r).toMatchObject({ status: 'running', statusReason: null, runtimeVersion: '2.4.1', ffmpegAvailable: true, ffmpegVersion: '6.1.1', uptime: '1m 0s', startedAt: null })
    expect(r.probeChecks).toEqual([
      { path: '/healthz', ok: false, status: 404, reason: 'HTTP 404' },
      { path: '/readyz', ok: false, status: 404, reason: 'HTTP 404' },
      { path: '/api/status', ok: true, status: 200, reason: null },
    ])
  })

  it('state "running" without a running flag → running', async () => {
    rt.set('/api/status', { body: { configured: true, state: 'running' } })
    expect((await probe()).status).toBe('running')
  })

  it('running false → stopped, and state "stopped" → stopped', async () => {
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    rt.set('/api/status', HEALTHY.status({ running: false, state: 'paused' }))
    const a = await probe()
    expect(a.status).toBe('stopped')
    expect(a.statusReason).toMatch(/not running.*paused/)
    rt.set('/api/status', { body: { configured: true, state: 'stopped' } })
    expect((await probe()).status).toBe('stopped')
  })

  it('another state: legacy probes decide (healthy, starting, inconclusive → unknown)', async () => {
    rt.set('/api/status', { body: { configured: true, state: 'booting', version: '3.0.0' } })
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    expect(await probe()).toMatchObject({ status: 'healthy', statusReason: null })
    rt.set('/readyz', { status: 503, body: { ready: false, failing: ['gateway'], uptimeMs: 10 } })
    const starting = await probe()
    expect(starting.status).toBe('starting')
    expect(starting.statusReason).toMatch(/booting/)
    rt.set('/healthz', undefined)
    rt.set('/readyz', undefined)
    const unknown = await probe()
    expect(unknown).toMatchObject({ status: 'unknown', runtimeVersion: '3.0.0' })
    expect(unknown.statusReason).toMatch(/inconclusive/)
  })
})

describe('classification table, /api/status not 200', () => {
  it('/healthz and /readyz both 200 → healthy; version from /healthz; startedAt from uptimeMs', async () => {
    rt.set('/api/status', { status: 500, body: { error: 'boom' } })
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    const now = Date.parse('2030-01-01T00:01:00.000Z')
    const r = await probeRuntime(rt.url, { timeouts: short, now: () => now })
    expect(r).toMatchObject({ status: 'healthy', statusReason: null, runtimeVersion: '2.4.0', ffmpegAvailable: false, ffmpegVersion: null, uptime: null })
    expect(r.startedAt).toBe('2030-01-01T00:00:00.000Z')
    expect(reasons(r)['/api/status']).toBe('HTTP 500')
  })

  it('/healthz 200 and /readyz not 200 → starting', async () => {
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', { status: 503, body: { ready: false, failing: ['startup'], uptimeMs: 50 } })
    const r = await probe()
    expect(r.status).toBe('starting')
    expect(r.statusReason).toMatch(/HTTP 503/)
  })

  it('/readyz 200 but ready false counts as not ready → starting', async () => {
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', { body: { ready: false, failing: ['startup'], uptimeMs: 50 } })
    const r = await probe()
    expect(r.status).toBe('starting')
    expect(reasons(r)['/readyz']).toBe('not ready')
  })

  it('every probe failing (500 and 404s) → unreachable with each reason', async () => {
    rt.set('/api/status', { status: 500, raw: 'Internal Server Error' })
    const r = await probe()
    expect(r.status).toBe('unreachable')
    expect(r.statusReason).toBe('All probes failed: /healthz HTTP 404, /readyz HTTP 404, /api/status HTTP 500')
    expect(r.runtimeVersion).toBeNull()
  })

  it('nothing listening → unreachable, connection refused', async () => {
    const gone = await startFakeRuntime()
    await gone.close()
    const r = await probeRuntime(gone.url, { timeouts: short })
    expect(r.status).toBe('unreachable')
    expect(r.probeChecks.every((c) => !c.ok && c.status === null && c.reason === 'connection refused')).toBe(true)
  })

  it('an invalid base URL is classified, not thrown', async () => {
    const r = await probeRuntime('not a url', { timeouts: short })
    expect(r.status).toBe('unreachable')
    expect(reasons(r)['/healthz']).toBe('invalid URL')
  })
})

describe('timeouts', () => {
  it('a runtime that hangs on every probe is unreachable once the timeouts pass', async () => {
    for (const p of ['/healthz', '/readyz', '/api/status']) rt.set(p, { hang: true })
    const started = Date.now()
    const r = await probeRuntime(rt.url, { timeouts: { '/healthz': 200, '/readyz': 150, '/api/status': 250 } })
    const took = Date.now() - started
    expect(r.status).toBe('unreachable')
    expect(reasons(r)).toEqual({ '/healthz': 'timeout (0s)', '/readyz': 'timeout (0s)', '/api/status': 'timeout (0s)' })
    // In parallel: bounded by the longest timeout, not their sum (generous margin for a loaded machine).
    expect(took).toBeGreaterThanOrEqual(240)
    expect(took).toBeLessThan(3000)
  })

  it('a slow /api/status beyond its timeout leaves the legacy probes to decide', async () => {
    rt.set('/api/status', { ...HEALTHY.status(), delayMs: 2000 })
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', { status: 503, body: { ready: false } })
    const r = await probe()
    expect(r.status).toBe('starting')
    expect(r.probeChecks[2]).toEqual({ path: '/api/status', ok: false, status: null, reason: 'timeout (0s)' })
  })

  it('an answer within its timeout counts', async () => {
    rt.set('/api/status', { ...HEALTHY.status(), delayMs: 50 })
    expect((await probeRuntime(rt.url, { timeouts: { '/api/status': 2000 } })).status).toBe('running')
  })

  it('defaults are the spec timeouts, 5 s / 4 s / 5 s, each passed as an abort signal', async () => {
    expect(PROBE_TIMEOUTS_MS).toEqual({ '/healthz': 5000, '/readyz': 4000, '/api/status': 5000 })
    const seen: string[] = []
    const fetchStub: typeof fetch = async (input, init) => {
      seen.push(`${new URL(String(input)).pathname} ${init?.signal instanceof AbortSignal}`)
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })
    }
    const r = await probeRuntime('http://127.0.0.1:1', { fetch: fetchStub })
    expect(r.status).toBe('unreachable')
    expect(seen.sort()).toEqual(['/api/status true', '/healthz true', '/readyz true'])
  })
})

describe('garbage and broken answers are classified, never thrown', () => {
  it('/api/status 200 with a body that is not JSON → not authoritative, legacy decide', async () => {
    rt.set('/api/status', { raw: '<html>hello</html>' })
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    const r = await probe()
    expect(r.status).toBe('healthy')
    expect(reasons(r)['/api/status']).toBe('body is not JSON')
    expect(r.probeChecks[2].ok).toBe(false)
  })

  it('/api/status with wrong types (configured a string, running a number, ffmpeg garbage) is ignored', async () => {
    rt.set('/healthz', HEALTHY.healthz)
    for (const body of [
      { configured: 'yes', running: true },
      { configured: true, running: 1 },
      { configured: true, running: true, runtime: { ffmpeg: { available: 'no' } } },
      { configured: true, running: true, uptime: 12 },
      [true],
      'running',
    ]) {
      rt.set('/api/status', { body })
      const r = await probe()
      expect(r.status, JSON.stringify(body)).toBe('starting')
      expect(r.probeChecks[2].ok).toBe(false)
      expect(r.ffmpegAvailable).toBe(false)
    }
  })

  it('legacy probes with wrong bodies are failures (ok not true, 200 with HTML)', async () => {
    rt.set('/healthz', { body: { ok: 'true' } })
    rt.set('/readyz', { raw: 'ready' })
    const r = await probe()
    expect(r.status).toBe('unreachable')
    expect(reasons(r)).toEqual({ '/healthz': 'body has the wrong shape', '/readyz': 'body is not JSON', '/api/status': 'HTTP 404' })
  })

  it('a socket destroyed before any answer', async () => {
    rt.set('/api/status', { destroy: true })
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    const r = await probe()
    expect(r.status).toBe('healthy')
    expect(r.probeChecks[2]).toMatchObject({ ok: false, status: null })
    expect(reasons(r)['/api/status']).toMatch(/connection reset|socket error|unreachable/)
  })

  it('a socket destroyed in the middle of the body', async () => {
    rt.set('/api/status', { cutOff: true })
    rt.set('/healthz', { cutOff: true })
    rt.set('/readyz', { cutOff: true })
    const r = await probe()
    expect(r.status).toBe('unreachable')
    for (const c of r.probeChecks) expect(c).toMatchObject({ ok: false, status: 200, reason: expect.stringMatching(/^body cut off/) })
  })

  it('a body that stalls after the headers times out', async () => {
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    rt.set('/api/status', { cutOff: true })
    // cutOff destroys after 20 ms; a 5 ms timeout fires first, while the body is still being sent.
    const r = await probeRuntime(rt.url, { timeouts: { '/healthz': 2000, '/readyz': 2000, '/api/status': 5 } })
    expect(r.probeChecks[2].ok).toBe(false)
    expect(r.status).toBe('healthy')
  })

  it('a huge body is refused', async () => {
    rt.set('/api/status', { raw: JSON.stringify({ configured: true, running: true, pad: 'x'.repeat(100_000) }) })
    const r = await probe()
    expect(reasons(r)['/api/status']).toBe('body too large')
    expect(r.status).toBe('unreachable')
  })
})

describe("the watchdog's check (checkRuntime): the probe's status and reason, in fewer requests", () => {
  const hits = () => Object.fromEntries(PROBE_PATHS_ASKED.map((p) => [p, rt.hits.get(p) ?? 0]))
  const PROBE_PATHS_ASKED = ['/healthz', '/readyz', '/api/status'] as const
  const notReady = { status: 503, body: { ready: false, failing: ['startup'], uptimeMs: 50 } }
  // Each row of the spec's table, and the malformed answers around it: [name, /api/status, /healthz, /readyz].
  const cases: Array<[string, FakeAnswer | undefined, FakeAnswer | undefined, FakeAnswer | undefined]> = [
    ['configured false', { body: { configured: false, running: true } }, HEALTHY.healthz, HEALTHY.readyz],
    ['running true, legacy 404', HEALTHY.status(), undefined, undefined],
    ['state running', { body: { configured: true, state: 'running' } }, undefined, undefined],
    ['running false', HEALTHY.status({ running: false, state: 'paused' }), HEALTHY.healthz, HEALTHY.readyz],
    ['state stopped', { body: { configured: true, state: 'stopped' } }, undefined, undefined],
    ['another state, legacy healthy', { body: { configured: true, state: 'booting' } }, HEALTHY.healthz, HEALTHY.readyz],
    ['another state, live not ready', { body: { configured: true, state: 'booting' } }, HEALTHY.healthz, notReady],
    ['another state, legacy inconclusive', { body: { configured: true, state: 'booting' } }, undefined, undefined],
    ['status 500, legacy healthy', { status: 500, body: { error: 'boom' } }, HEALTHY.healthz, HEALTHY.readyz],
    ['status 500, live not ready', { status: 500, body: {} }, HEALTHY.healthz, notReady],
    ['status 404, ready not live', undefined, { body: { ok: false } }, HEALTHY.readyz],
    ['every probe failing', { status: 500, raw: 'Internal Server Error' }, undefined, undefined],
    ['status not JSON', { raw: '<html>hello</html>' }, HEALTHY.healthz, HEALTHY.readyz],
    ['status with wrong types', { body: { configured: true, running: 1 } }, HEALTHY.healthz, undefined],
    ['status cut off', { cutOff: true }, { cutOff: true }, { cutOff: true }],
    ['status too large', { raw: JSON.stringify({ configured: true, running: true, pad: 'x'.repeat(100_000) }) }, undefined, undefined],
  ]

  it.each(cases)('%s: the same status and reason as the full probe', async (_name, status, healthz, readyz) => {
    rt.set('/api/status', status)
    rt.set('/healthz', healthz)
    rt.set('/readyz', readyz)
    const full = await probe()
    const check = await checkRuntime(rt.url, { timeouts: short })
    expect({ status: check.status, statusReason: check.statusReason }).toEqual({ status: full.status, statusReason: full.statusReason })
  })

  it('a runtime whose /api/status decides is asked that path alone', async () => {
    rt.hits.clear()
    rt.set('/api/status', HEALTHY.status())
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    expect(await checkRuntime(rt.url, { timeouts: short })).toEqual({ status: 'running', statusReason: null, asked: ['/api/status'] })
    rt.set('/api/status', { body: { configured: false } })
    expect(await checkRuntime(rt.url, { timeouts: short })).toMatchObject({ status: 'setup', asked: ['/api/status'] })
    expect(hits()).toEqual({ '/healthz': 0, '/readyz': 0, '/api/status': 2 })
  })

  it('an inconclusive or failed /api/status asks the legacy probes, once each', async () => {
    rt.hits.clear()
    rt.set('/api/status', { body: { configured: true, state: 'booting' } })
    rt.set('/healthz', HEALTHY.healthz)
    rt.set('/readyz', HEALTHY.readyz)
    const asked: ProbePath[] = ['/healthz', '/readyz', '/api/status']
    expect(await checkRuntime(rt.url, { timeouts: short })).toEqual({ status: 'healthy', statusReason: null, asked })
    rt.set('/api/status', undefined)
    expect(await checkRuntime(rt.url, { timeouts: short })).toEqual({ status: 'healthy', statusReason: null, asked })
    expect(hits()).toEqual({ '/healthz': 2, '/readyz': 2, '/api/status': 2 })
  })

  it('nothing listening or a bad URL is unreachable, never thrown', async () => {
    const gone = await startFakeRuntime()
    await gone.close()
    expect((await checkRuntime(gone.url, { timeouts: short })).status).toBe('unreachable')
    expect(await checkRuntime('not a url', { timeouts: short })).toMatchObject({ status: 'unreachable', statusReason: expect.stringMatching(/invalid URL/) })
  })

  it('a hanging runtime takes /api/status\'s timeout, then the legacy ones: CHECK_TIMEOUT_MS at the defaults', async () => {
    for (const p of PROBE_PATHS_ASKED) rt.set(p, { hang: true })
    const started = Date.now()
    const r = await checkRuntime(rt.url, { timeouts: { '/healthz': 100, '/readyz': 150, '/api/status': 200 } })
    expect(r.status).toBe('unreachable')
    expect(Date.now() - started).toBeGreaterThanOrEqual(340)
    expect(CHECK_TIMEOUT_MS).toBe(PROBE_TIMEOUTS_MS['/api/status'] + PROBE_TIMEOUTS_MS['/healthz'])
  })
})
