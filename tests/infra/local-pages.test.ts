import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startServer } from '../../infra/server'
import { closedPort } from '../support/loopback'

/**
 * The local server's mail inbox and the pages its links lead to (infra/local-pages.ts), and its own origin trusted
 * for cookie-authenticated calls; none of it with a mail provider or in production.
 */
const UA = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0' }

async function start(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'local-pages-'))
  const [web, backend] = [await closedPort(), await closedPort()]
  const printed: string[] = []
  const log = vi.spyOn(console, 'log').mockImplementation((line) => void printed.push(String(line)))
  const info = vi.spyOn(console, 'info').mockImplementation(() => {})
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
  try {
    const server = await startServer({ PORT: String(web), BACKEND_PORT: String(backend), DATA_DIR: dataDir, LOG_REQUESTS: '0', PASSWORD_HASH_COST: '4', PATH: process.env.PATH, ...env })
    return {
      base: `http://127.0.0.1:${web}`,
      port: web,
      printed,
      async close() {
        await server.close()
        info.mockRestore()
        warn.mockRestore()
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
  } finally {
    log.mockRestore()
  }
}

describe('local mail inbox and link pages (no mail provider, not production)', () => {
  let s: Awaited<ReturnType<typeof start>>
  beforeAll(async () => {
    s = await start()
  }, 60_000)
  afterAll(() => s?.close(), 30_000)

  const register = (email: string, origin?: string) =>
    fetch(`${s.base}/api/register`, {
      method: 'POST',
      headers: { ...UA, 'content-type': 'application/json', ...(origin && { origin }) },
      body: JSON.stringify({ email, password: 'correct horse battery staple', name: '<script>alert(1)</script>' }),
    })

  it('the start names the inbox; sign-up mail appears newest first, as JSON and as a page, its link on this server', async () => {
    expect(s.printed.join('\n')).toContain(`mail         no provider: read it at ${s.base}/dev/mail`)
    const [a, b] = [`inbox-a-${crypto.randomUUID().slice(0, 8)}@example.com`, `inbox-b-${crypto.randomUUID().slice(0, 8)}@example.com`]
    expect((await register(a)).status).toBe(201)
    expect((await register(b)).status).toBe(201)

    const all = await fetch(`${s.base}/dev/mail.json`)
    expect(all.status).toBe(200)
    expect(all.headers.get('cache-control')).toBe('no-store')
    const { mails } = await all.json()
    expect(mails.slice(0, 2).map((m: { to: string }) => m.to)).toEqual([b, a])
    expect(mails[0]).toMatchObject({ kind: 'email-verification', subject: 'Confirm your email address' })
    expect(mails[0].links).toEqual([expect.stringMatching(new RegExp(`^http://localhost:${s.port}/verify-email\\?token=[0-9a-f]{64}$`))])

    const one = await (await fetch(`${s.base}/dev/mail.json?to=${encodeURIComponent(a.toUpperCase())}`)).json()
    expect(one.mails.map((m: { to: string }) => m.to)).toEqual([a])

    const page = await fetch(`${s.base}/dev/mail`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await page.text()
    expect(html).toContain(`<a href="${mails[0].links[0]}">`)
    expect(html.indexOf(b)).toBeLessThan(html.indexOf(a))
  })

  it('the verification page completes the action from this origin: its script posts the token to the API', async () => {
    const page = await fetch(`${s.base}/verify-email?token=abc`)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('"/api/auth/verify-email"')
    expect(html).toContain('the password stops working') // it says what opening it elsewhere costs
    const reset = await (await fetch(`${s.base}/reset-password?token=abc`)).text()
    expect(reset).toContain('"/api/auth/reset-password"')
    expect(reset).toContain('name="password"')
  })

  it('its own origin is trusted for signed-in calls; another origin is still refused', async () => {
    const email = `origin-${crypto.randomUUID().slice(0, 8)}@example.com`
    expect((await register(email)).status).toBe(201)
    const csrf = await (await fetch(`${s.base}/api/auth/csrf`)).json()
    const login = await fetch(`${s.base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf.header },
      body: JSON.stringify({ email, password: 'correct horse battery staple' }),
    })
    expect(login.status).toBe(200)
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
    const createKey = (origin: string) =>
      fetch(`${s.base}/api/keys`, { method: 'POST', headers: { cookie, origin, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'k' }) })
    expect((await createKey(s.base)).status).toBe(201)
    expect((await createKey(`http://localhost:${s.port}`)).status).toBe(201)
    expect((await createKey('http://localhost:3000')).status).toBe(201) // a local dashboard stays trusted
    expect((await createKey('http://evil.example')).status).toBe(403)
  })

  it('a refused WebSocket upgrade answers its status with the JSON error body, as any request', async () => {
    const upgrade = (headers: Record<string, string> = {}) =>
      new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
        const req = request(`${s.base}/api/permissions/socket`, {
          headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
        })
        req.on('response', (res) => {
          let body = ''
          res.on('data', (d) => (body += d))
          res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body }))
        })
        req.on('upgrade', () => reject(new Error('upgraded')))
        req.on('error', reject)
        req.end()
      })
    const signedOut = await upgrade()
    expect(signedOut.status).toBe(401)
    expect(signedOut.type).toBe('application/json')
    expect(JSON.parse(signedOut.body)).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    const unknown = await upgrade({ origin: 'http://evil.example' })
    expect(unknown.status).toBe(401) // no session: the origin is not even weighed
  })

  it('mail content is escaped on the page', async () => {
    const html = await (await fetch(`${s.base}/dev/mail`)).text()
    expect(html).not.toContain('<script>alert(1)</script>')
  })
})

describe('the local pages are never served with a mail provider or in production', () => {
  it.each([
    ['a mail provider', { RESEND_API_KEY: 're_test', RESEND_API_URL: 'http://127.0.0.1:9' }],
    ['NODE_ENV=production', { NODE_ENV: 'production', SESSION_SECRET: 's', FARCASTER_SESSION_SECRET: 'f', INTERNAL_API_KEY: 'i', HMAC_SECRET: 'h', ENCRYPTION_KEYS: `k:${Buffer.alloc(32).toString('base64')}`, QSTASH_CURRENT_SIGNING_KEY: 'q' }],
  ])('with %s: 404 for the inbox and the link pages, and the start does not name an inbox', async (_, env) => {
    const s = await start(env as Record<string, string>)
    try {
      for (const path of ['/dev/mail', '/dev/mail.json', '/verify-email?token=abc', '/reset-password?token=abc']) {
        expect((await fetch(`${s.base}${path}`)).status, path).toBe(404)
      }
      expect(s.printed.join('\n')).not.toContain('/dev/mail')
    } finally {
      await s.close()
    }
  }, 60_000)

  it('in production its own origin is not added to the trusted ones', async () => {
    const s = await start({ NODE_ENV: 'production', SESSION_SECRET: 's', FARCASTER_SESSION_SECRET: 'f', INTERNAL_API_KEY: 'i', HMAC_SECRET: 'h', ENCRYPTION_KEYS: `k:${Buffer.alloc(32).toString('base64')}`, QSTASH_CURRENT_SIGNING_KEY: 'q' })
    try {
      expect(s.printed.join('\n')).not.toContain('origins      trusted')
    } finally {
      await s.close()
    }
  }, 60_000)
})
