import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { startServer } from '../../infra/server'
import { closedPort } from '../support/loopback'

const dataDir = mkdtempSync(join(tmpdir(), 'server-test-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('npm start: one process, two listeners, embedded stores', () => {
  it('serves the web and backend APIs, prints URLs and adapters, and restarts on the same data', async () => {
    const [web, backend] = [await closedPort(), await closedPort()]
    const env = { PORT: String(web), BACKEND_PORT: String(backend), DATA_DIR: dataDir, PATH: process.env.PATH }
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    let server = await startServer({ ...env })
    const printed = log.mock.calls.map((c) => c.join(' ')).join('\n')
    expect(printed).toContain(`http://127.0.0.1:${web}`)
    expect(printed).toContain(`http://127.0.0.1:${backend}`)
    expect(printed).toContain('db=pglite kv=memory queue=in-process storage=local-files runtimes=local-processes')
    try {
      const health = await (await fetch(`http://127.0.0.1:${web}/api/health`)).json()
      expect(health.status).toBe('ok')
      expect((await fetch(`http://127.0.0.1:${web}/api/version`)).status).toBe(200)
      expect((await (await fetch(`http://127.0.0.1:${backend}/health`)).json()).status).toBe('ok')
      // The dashboard probes the backend listener by default, across the loopback.
      const dash = await (await fetch(`http://127.0.0.1:${web}/api/dashboard/health`)).json()
      expect(dash.services).toEqual([{ name: 'backend', status: 'ok', detail: 'ok' }])
      expect((await (await fetch(`http://127.0.0.1:${web}/api/openapi.json`)).json()).openapi).toBe('3.1.0')
      expect((await (await fetch(`http://127.0.0.1:${backend}/openapi.json`)).json()).openapi).toBe('3.1.0')
    } finally {
      await server.close()
    }
    expect(readdirSync(dataDir)).toContain('pglite')
    // A second start on the same DATA_DIR re-applies migrations idempotently.
    server = await startServer({ ...env })
    try {
      expect((await fetch(`http://127.0.0.1:${web}/api/health`)).status).toBe(200)
    } finally {
      await server.close()
      log.mockRestore()
    }
  })
})
