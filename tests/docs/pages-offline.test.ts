import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startServer } from '../../infra/server'
import { CHROMIUM, chromiumInstalled, LAUNCH_ARGS } from '../support/passkey-browser'
import { closedPort } from '../support/loopback'

/**
 * Both docs pages (`npm start`'s listeners) in a real Chromium that cannot leave the machine: every request to
 * another host is aborted and recorded. The pages must still render their operations, from the script we serve,
 * show none of the renderer's controls that call Scalar's services (lib/http/openapi-docs.ts `OFFLINE_PAGE`), and
 * stay on their origin whatever the reader clicks: every control of the sidebar and the header, and a try-it.
 */

/** The renderer's controls that reach Scalar's services: none may be on a page. */
const CALLING_OUT = ['Ask AI', 'Generate MCP', 'VS Code', 'Cursor', 'Developer Tools', 'Configure', 'Share', 'Deploy', 'Open API Client', 'Open in API Client']

/** Clicks (as the DOM does) every visible control under `scope`, closing whatever each opens; returns how many. */
async function clickEvery(page: Page, scopes: string[]) {
  const selector = scopes.flatMap((scope) => ['a', 'button', '[role="button"]', '[role="link"]', '[role="tab"]'].map((c) => `${scope} ${c}`)).join(', ')
  return page.evaluate(async (selector) => {
    const controls = [...document.querySelectorAll<HTMLElement>(selector)].filter((e) => e.offsetParent !== null)
    for (const control of controls) {
      control.click()
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))
      await new Promise((r) => setTimeout(r, 0))
    }
    return controls.length
  }, selector)
}
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
    {
      name: 'web API',
      at: () => origin.web,
      page: '/api/docs',
      doc: '/api/openapi.json',
      script: '/api/docs/scalar.js',
      mustShow: ["The caller's API keys, newest first", 'Sign in with email and password'],
      tryIt: { summary: 'Service health', section: '/GET/api/health', path: '/api/health' },
    },
    {
      name: 'backend API',
      at: () => origin.backend,
      page: '/docs',
      doc: '/openapi.json',
      script: '/docs/scalar.js',
      mustShow: ['Validate a user API key', 'Installation heartbeat'],
      tryIt: { summary: 'Backend health', section: '/GET/health', path: '/health' },
    },
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

        // A try-it: the operation's "Test Request", sent from the page, reaches this origin and nowhere else.
        await page.locator('aside').getByText(p.tryIt.summary, { exact: true }).click()
        const op = page.locator(`[id$="${p.tryIt.section}"]`)
        await op.getByRole('button', { name: /Test Request/ }).click()
        const answered = page.waitForResponse((res) => new URL(res.url()).pathname === p.tryIt.path && res.request().method() === 'GET')
        await page.getByRole('button', { name: /^Send/ }).first().click()
        expect((await answered).status()).toBe(200)
        await page.keyboard.press('Escape')

        // None of the controls that call Scalar's services is there; no visible link leaves the origin (the sidebar's
        // "Powered by Scalar", the try-it's status code to MDN).
        for (const name of CALLING_OUT) expect(await page.getByRole('button', { name, exact: true }).count(), `"${name}" button`).toBe(0)
        const offsite = await page.evaluate(() =>
          [...document.querySelectorAll<HTMLAnchorElement>('a[href]')]
            .filter((a) => a.offsetParent !== null && a.protocol.startsWith('http') && a.origin !== location.origin)
            .map((a) => `${a.innerText.trim()} → ${a.href}`),
        )
        expect(offsite, 'visible links to other hosts').toEqual([])

        // Every control of the sidebar and of the page's header, then the operations' own (copy, client tabs, ...).
        expect(await clickEvery(page, ['aside'])).toBeGreaterThan(summaries.length)
        expect(await clickEvery(page, ['header', '.introduction-section', '.section-introduction', '[id$="description/introduction"]'])).toBeGreaterThan(0)

        expect(aborted, 'requests to other hosts').toEqual([])
      } finally {
        await context.close()
      }
    }, 90_000)

  it('web API: the sign-up example the page generates (Shell, curl) signs up as pasted', async () => {
    const base = origin.web
    const context = await browser.newContext()
    context.setDefaultTimeout(30_000)
    await context.route('**/*', (route) => (new URL(route.request().url()).origin === base ? route.continue() : route.abort('internetdisconnected')))
    try {
      const page = await context.newPage()
      await page.goto(`${base}/api/docs`)
      await page.getByRole('button', { name: 'Open Group - Auth' }).click()
      await page.locator('aside').getByText('Sign up', { exact: true }).click()
      const example = page.locator('[id$="/POST/api/register"]').locator('pre', { hasText: 'curl http' }).first()
      const command = (await example.innerText()).trim()
      expect(command).toMatch(new RegExp(`^curl ${base}/api/register`))
      const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
        execFile('sh', ['-c', `${command} --silent --show-error --write-out '\n%{http_code}'`], { timeout: 20_000 }, (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve({ stdout }),
        ),
      )
      const [body, status] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)]
      expect(status, body).toBe('201')
      expect(JSON.parse(body)).toMatchObject({ email: 'new-user@example.com', name: 'New User' })
    } finally {
      await context.close()
    }
  }, 90_000)
})
