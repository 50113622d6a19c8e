import { afterEach, describe, expect, it, vi } from 'vitest'
import { app as healthApp } from '../../../functions/health/app'
import { classifyHealth } from '../../../functions/health/routes/health'
import { createPlatformApp } from '../../../lib/app'
import type { RuntimeMetrics } from '../../../lib/context'
import { useHarness } from '../../support/harness'

const h = useHarness()
afterEach(() => {
  vi.restoreAllMocks()
})

const metricsOf = (cpuPercent: number | null, memoryPercent: number | null): RuntimeMetrics => ({
  cpuPercent,
  memoryPercent,
  uptimeSec: 42,
  runtime: 'test',
})

/** The health family on the shared stack, with `metrics()` replaced. */
const appWithMetrics = (metrics: () => Promise<RuntimeMetrics>) =>
  createPlatformApp(() => ({ ...h.services, metrics })).route('/', healthApp)

const isIsoTimestamp = (v: unknown) => typeof v === 'string' && new Date(v).toISOString() === v

describe('health: metrics collection fails', () => {
  it('GET /api/health answers 500 {status:error, health:unhealthy, timestamp, error, code:INTERNAL} and logs with the request id', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const app = appWithMetrics(async () => {
      throw new Error('boom')
    })
    const res = await app.request('/api/health')
    expect(res.status).toBe(500)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(['code', 'error', 'health', 'status', 'timestamp'])
    expect(body.status).toBe('error')
    expect(body.health).toBe('unhealthy')
    expect(isIsoTimestamp(body.timestamp)).toBe(true)
    expect(JSON.stringify(body)).not.toContain('boom')
    const requestId = res.headers.get('x-request-id')
    expect(requestId).toBeTruthy()
    expect(logged).toHaveBeenCalled()
    expect(logged.mock.calls.some((args) => String(args[0]).includes(requestId!))).toBe(true)
  })

  it('a synchronous throw inside metrics() is still the documented 500 body', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const app = appWithMetrics((() => {
      throw new TypeError('os.loadavg is not a function')
    }) as unknown as () => Promise<RuntimeMetrics>)
    const res = await app.request('/api/health')
    expect(res.status).toBe(500)
    expect(await res.json()).toMatchObject({ status: 'error', health: 'unhealthy', error: 'Collecting metrics failed', code: 'INTERNAL' })
  })

  it('GET /api/admin/health with failing metrics is the generic 500 envelope, not the error text', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const app = appWithMetrics(async () => {
      throw new Error('boom: secret')
    })
    const res = await app.request('/api/admin/health', { headers: { cookie: h.users.admin.cookie } })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Internal server error', code: 'INTERNAL' })
    expect(logged).toHaveBeenCalled()
  })
})

describe('health: classifyHealth boundaries', () => {
  it.each([
    [0, 0, 'healthy'],
    [70, 70, 'healthy'],
    [70.1, 0, 'degraded'],
    [0, 70.1, 'degraded'],
    [85, 85, 'degraded'],
    [85, 0, 'degraded'],
    [85.1, 0, 'unhealthy'],
    [0, 85.1, 'unhealthy'],
    [100, 100, 'unhealthy'],
  ] as const)('cpu %s / memory %s → %s', (cpu, memory, expected) => {
    expect(classifyHealth({ cpuPercent: cpu, memoryPercent: memory })).toBe(expected)
  })

  it('the worse of cpu and memory decides, whichever it is', () => {
    expect(classifyHealth({ cpuPercent: 90, memoryPercent: 10 })).toBe('unhealthy')
    expect(classifyHealth({ cpuPercent: 10, memoryPercent: 90 })).toBe('unhealthy')
    expect(classifyHealth({ cpuPercent: 75, memoryPercent: 10 })).toBe('degraded')
    expect(classifyHealth({ cpuPercent: 10, memoryPercent: 75 })).toBe('degraded')
    expect(classifyHealth({ cpuPercent: 75, memoryPercent: 90 })).toBe('unhealthy')
  })

  it('null metrics (workerd) are healthy; one null and one high figure follow the figure', () => {
    expect(classifyHealth({ cpuPercent: null, memoryPercent: null })).toBe('healthy')
    expect(classifyHealth({ cpuPercent: null, memoryPercent: 86 })).toBe('unhealthy')
    expect(classifyHealth({ cpuPercent: 71, memoryPercent: null })).toBe('degraded')
  })
})

describe('health: class through the route with injected metrics', () => {
  it.each([
    [90, 10, 'unhealthy'],
    [10, 90, 'unhealthy'],
    [80, 10, 'degraded'],
    [70, 70, 'healthy'],
    [null, null, 'healthy'],
  ] as const)('cpu %s / memory %s → 200 %s, no figures in the body', async (cpu, memory, expected) => {
    const app = appWithMetrics(async () => metricsOf(cpu, memory))
    const res = await app.request('/api/health')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toEqual({ status: 'ok', health: expected, timestamp: expect.any(String) })
    expect(isIsoTimestamp(body.timestamp)).toBe(true)
  })

  it('the admin view classifies the same metrics and reports them', async () => {
    const app = appWithMetrics(async () => metricsOf(90, 20))
    const res = await app.request('/api/admin/health', { headers: { cookie: h.users.admin.cookie } })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ok', health: 'unhealthy', cpu: 90, memory: 20, uptime: 42, runtime: 'test' })
  })
})
