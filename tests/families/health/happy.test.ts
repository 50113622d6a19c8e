import { describe, expect, it } from 'vitest'
import { useHarness } from '../../support/harness'

const h = useHarness({ env: { APP_VERSION: 'v1.2.3', HEALTH_PROBE_URLS: 'none=http://127.0.0.1:1/x' } })

describe('health: happy paths', () => {
  it('GET /api/health reports ok with a health class and an ISO timestamp, no metrics', async () => {
    const res = await h.web.request('/api/health')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.status).toBe('ok')
    expect(['healthy', 'degraded', 'unhealthy']).toContain(body.health)
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp)
    expect(Object.keys(body).sort()).toEqual(['health', 'status', 'timestamp'])
  })

  it('GET /api/version returns the configured version with its cache header', async () => {
    const res = await h.web.request('/api/version')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ version: 'v1.2.3' })
    expect(res.headers.get('cache-control')).toBe('max-age=3600, stale-while-revalidate=3600')
  })

  it('GET /api/admin/health gives an admin CPU, memory, uptime and the adapters', async () => {
    const res = await h.web.request('/api/admin/health', { headers: { cookie: h.users.admin.cookie } })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(typeof body.cpu).toBe('number')
    expect(typeof body.memory).toBe('number')
    expect(typeof body.uptime).toBe('number')
    expect(body.adapters.db).toMatch(/pglite|postgres/)
  })

  it('backend GET /health reports docker, provisioning, the legacy provider and where agents run', async () => {
    const res = await h.backend.request('/health')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ status: 'ok', docker: 'unavailable', provisioning: 'disabled', provider: 'docker' })
    expect(body.runtimes).toBe(h.services.runtimes.kind === 'local' ? 'local-processes' : 'railway')
    expect(typeof body.timestamp).toBe('string')
  })

  it('serves the OpenAPI 3.1 document and the docs page', async () => {
    const res = await h.web.request('/api/openapi.json')
    expect(res.status).toBe(200)
    const doc = await res.json()
    expect(doc.openapi).toBe('3.1.0')
    for (const p of ['/api/health', '/api/admin/health', '/api/version', '/api/dashboard/health']) expect(doc.paths[p]).toBeDefined()
    expect(doc.paths['/api/health'].get.responses['200'].content['application/json'].schema).toBeDefined()
    const page = await h.web.request('/api/docs')
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('/api/openapi.json')
    const backendDoc = await (await h.backend.request('/openapi.json')).json()
    expect(backendDoc.paths['/health']).toBeDefined()
    expect(backendDoc.paths['/api/health']).toBeUndefined()
  })
})
