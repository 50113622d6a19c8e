import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startServer } from '../../infra/server'
import { CHROMIUM, chromiumInstalled, LAUNCH_ARGS } from '../support/passkey-browser'
import { closedPort } from '../support/loopback'

/**
 * Both docs pages (`npm start`'s listeners) in a real Chromium that cannot leave the machine: every request to
 * another host is aborted and recorded. The pages must still render their operations, from the script we serve.
 */
const TITLE = 'API docs pages render offline (Chromium, requests off the local server aborted)'
if (!chromiumInstalled) console.warn(`${TITLE}: skipped: chromium not installed (${CHROMIUM})`)
const suite = chromiumInstalled ? describe : describe.skip

suite(chromiumInstalled ? TITLE : `${TITLE}: skipped: chromium not installed`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'docs-offline-'))
  let server: Awaited<ReturnType<typeof startServer>>
  let browser: Browser
  const origin = { web: '', backend: '' }

  beforeAll(async () => {
    const [web, backend] = [await closedPort(), await closedPort()]
    origin.web = `http://127.0.0.1:${web}`
    origin.backend = `http://127.0.0.1:${backend}`
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    try {
      server = await startServer({ PORT: String(web), BACKEND_PORT: String(backend), DATA_DIR: dataDir, SESSION_SECRET: 'docs-offline-test', PATH: process.env.PATH })
    } finally {
      log.mockRestore()
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS, timeout: 30_000 })
  }, 60_000)
  afterAll(async () => {
    await browser?.close().catch(() => {})
    await server?.close()
    rmSync(dataDir, { recursive: true, force: true })
  }, 60_000)

  const pages = [
    { name: 'web API', at: () => origin.web, page: '/api/docs', doc: '/api/openapi.json', script: '/api/docs/scalar.js', mustShow: ["The caller's API keys, newest first", 'Sign in with email and password'] },
    { name: 'backend API', at: () => origin.backend, page: '/docs', doc: '/openapi.json', script: '/docs/scalar.js', mustShow: ['Validate a user API key', 'Installation heartbeat'] },
  ]

  for (const p of pages)
    it(`${p.name}: ${p.page} renders its operations with every other host unreachable`, async () => {
      const base = p.at()
      const summaries: string[] = Object.values((await (await fetch(`${base}${p.doc}`)).json()).paths as Record<string, Record<string, { summary?: string }>>)
        .flatMap((ops) => Object.values(ops).map((op) => op.summary))
        .filter((s): s is string => Boolean(s))
      for (const s of p.mustShow) expect(summaries).toContain(s)

      const context = await browser.newContext()
      context.setDefaultTimeout(30_000)
      const aborted: string[] = []
      const served: Array<{ path: string; status: number }> = []
      await context.route('**/*', (route) => {
        const url = new URL(route.request().url())
        if (url.origin === base) return route.continue()
        aborted.push(url.href)
        return route.abort('internetdisconnected')
      })
      try {
        const page = await context.newPage()
        page.on('response', (res) => {
          const url = new URL(res.url())
          if (url.origin === base) served.push({ path: url.pathname, status: res.status() })
        })
        const res = await page.goto(`${base}${p.page}`)
        expect(res?.status()).toBe(200)
        // The operations, as the reader sees them: the sidebar lists each tag's summaries once its group is opened.
        const closed = page.getByRole('button', { name: /^Open Group - / })
        await closed
          .first()
          .waitFor({ timeout: 20_000 })
          .catch((e) => {
            throw new Error(`${p.page} did not render (requests aborted: ${aborted.join(', ') || 'none'}): ${e.message}`)
          })
        for (let opened = 0; (await closed.count()) > 0; opened++) {
          expect(opened, 'groups that stay closed').toBeLessThan(100)
          await closed.first().click()
        }
        await page.waitForFunction((wanted) => wanted.every((s) => document.body.innerText.includes(s)), p.mustShow, { timeout: 30_000 })
        const text = await page.evaluate(() => document.body.innerText)
        expect(summaries.length).toBeGreaterThan(5)
        expect(summaries.filter((s) => !text.includes(s)), 'operations missing from the page').toEqual([])
        expect(served).toContainEqual({ path: p.script, status: 200 })
        expect(served).toContainEqual({ path: p.doc, status: 200 })
        expect(aborted, 'requests to other hosts').toEqual([])
      } finally {
        await context.close()
      }
    }, 90_000)
})
