import { build } from 'esbuild'
import { Hono } from 'hono'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core'
import { createHarness, type Harness } from './harness'
import { serveFetch } from './loopback'

/**
 * A real Chromium against the web app on a loopback port, with a CDP virtual authenticator: the page at
 * `/passkey-test` (served by a test-only wrapper, never by functions/) bundles @simplewebauthn/browser and
 * exposes `window.passkeyTest` to drive the API with same-origin fetches, so cookies flow as in production.
 */
export const CHROMIUM = '/usr/bin/chromium'
export const chromiumInstalled = existsSync(CHROMIUM)

const root = fileURLToPath(new URL('../..', import.meta.url))

// Runs in the page. Every helper returns plain data (statuses, bodies, credentials) for the test to check.
const PAGE_SCRIPT = `
import { startAuthentication, startRegistration } from '@simplewebauthn/browser'

async function api(path, body, headers = {}) {
  const init = body === undefined
    ? { method: 'GET', headers }
    : { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }
  const res = await fetch(path, { ...init, credentials: 'same-origin' })
  const text = await res.text()
  let json = null
  try { json = JSON.parse(text) } catch {}
  return { status: res.status, body: json }
}

const ceremony = (start) => async (optionsJSON) => {
  try {
    return { ok: true, credential: await start({ optionsJSON }) }
  } catch (e) {
    return { ok: false, name: e.name, code: e.code, message: e.message }
  }
}
const create = ceremony(startRegistration)
const get = ceremony(startAuthentication)

window.passkeyTest = {
  api,
  create,
  get,
  async login(email, password) {
    const csrf = await api('/api/auth/csrf')
    return api('/api/auth/login', { email, password }, { 'x-csrf-token': csrf.body.header })
  },
  signOut: () => api('/api/auth/signout', {}),
  session: async () => (await api('/api/auth/session')).body,
  // 'override' is merged into the server's options: a client that asks the authenticator for less.
  async register(label, override = {}) {
    const options = await api('/api/passkey/register/options', {})
    if (options.status !== 200) return { options }
    const made = await create({ ...options.body.options, ...override })
    if (!made.ok) return { options: options.body, ceremony: made }
    const verify = await api('/api/passkey/register/verify', { credential: made.credential, challenge: options.body.challenge, label })
    return { options: options.body, credential: made.credential, verify }
  },
  async signIn(identifier, override = {}) {
    const options = await api('/api/passkey/auth/options', { identifier })
    const made = await get({ ...options.body.options, ...override })
    if (!made.ok) return { options: options.body, ceremony: made }
    const verify = await api('/api/passkey/auth/verify', { credential: made.credential, challenge: options.body.challenge })
    return { options: options.body, credential: made.credential, verify }
  },
}
`

async function bundlePageScript() {
  const out = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: root, loader: 'js', sourcefile: 'passkey-test.js' },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    logLevel: 'silent',
  })
  return out.outputFiles[0].text
}

const PAGE_HTML = '<!doctype html><html><head><meta charset="utf-8"><title>passkey test</title></head><body><script src="/passkey-test.js"></script></body></html>'

export interface VirtualAuthenticatorOptions {
  hasUserVerification?: boolean
  isUserVerified?: boolean
}

export interface PasskeyBrowser {
  h: Harness
  /** `http://localhost:<port>`: localhost is a secure context, so WebAuthn works over plain HTTP. */
  origin: string
  browser: Browser
  context: BrowserContext
  page: Page
  cdp: CDPSession
  /** The client IP the app sees for the browser's requests (rate limits count per IP). */
  setClientIp(ip: string): void
  /** A fresh CTAP2 platform authenticator with resident keys and user verification; returns its id. */
  addAuthenticator(opts?: VirtualAuthenticatorOptions): Promise<string>
  removeAuthenticator(id: string): Promise<void>
  /** Signs the browser in as a seeded user by planting its session cookie (no password login needed). */
  useSession(cookie: string): Promise<void>
  close(): Promise<void>
}

export const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export async function startPasskeyBrowser(env: Record<string, string> = {}): Promise<PasskeyBrowser> {
  const script = await bundlePageScript()
  let clientIp = '127.0.0.1'
  let target: (req: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 })
  // Listen first so the harness can be built with the real port in APP_ORIGIN (the relying party).
  const server = await serveFetch((req) => target(req))
  const origin = `http://localhost:${server.port}`
  const closeServer = server.close

  let h: Harness | undefined
  let browser: Browser | undefined
  try {
    h = await createHarness({ env: { APP_ORIGIN: origin, WEBAUTHN_RP_ID: 'localhost', ...env } })
    const web = h.web
    const wrapper = new Hono()
    wrapper.get('/passkey-test', (c) => c.html(PAGE_HTML))
    wrapper.get('/passkey-test.js', (c) => c.body(script, 200, { 'content-type': 'text/javascript; charset=utf-8' }))
    // What the edge would add: the client address, per test so the sign-in rate limit never couples them.
    wrapper.all('*', (c) => {
      const headers = new Headers(c.req.raw.headers)
      headers.set('cf-connecting-ip', clientIp)
      return web.fetch(new Request(c.req.raw, { headers }))
    })
    target = (req) => wrapper.fetch(req)

    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS, timeout: 30_000 })
    const context = await browser.newContext()
    context.setDefaultTimeout(20_000)
    const page = await context.newPage()
    await page.goto(`${origin}/passkey-test`)
    await page.waitForFunction(() => 'passkeyTest' in window)
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const harness = h
    const opened = browser

    return {
      h: harness,
      origin,
      browser: opened,
      context,
      page,
      cdp,
      setClientIp: (ip) => {
        clientIp = ip
      },
      async addAuthenticator(opts = {}) {
        const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
          options: {
            protocol: 'ctap2',
            transport: 'internal',
            hasResidentKey: true,
            hasUserVerification: opts.hasUserVerification ?? true,
            isUserVerified: opts.isUserVerified ?? true,
            automaticPresenceSimulation: true,
          },
        })
        return authenticatorId
      },
      async removeAuthenticator(id) {
        await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: id })
      },
      async useSession(cookie) {
        const [name, value] = cookie.split('=')
        await context.clearCookies()
        await context.addCookies([{ name, value, url: origin, httpOnly: true, sameSite: 'Lax' }])
      },
      async close() {
        await opened.close().catch(() => {})
        await closeServer()
        await harness.close()
      },
    }
  } catch (e) {
    await browser?.close().catch(() => {})
    await closeServer()
    await h?.close()
    throw e
  }
}
