import { sql } from 'drizzle-orm'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createPlatformApp, createRouter } from '../../lib/app'
import { asService } from '../../lib/db/rls'
import { users } from '../../schema'
import { BROWSER, useHarness } from '../support/harness'

// Issue #9 finding 4: a NUL byte answered 500 on these routes (Postgres refuses 0x00 and the error escaped).
const SHARED_KEY = 'test-internal-key'
let csrf: string

const h = useHarness({ env: { INTERNAL_API_KEY: SHARED_KEY } })
beforeAll(async () => {
  csrf = ((await (await h.web.request('/api/auth/csrf')).json()) as { header: string }).header
})
afterEach(() => vi.restoreAllMocks())

/** encodeURIComponent throws on a lone surrogate; those cases are filtered out below anyway. */
const enc = (s: string) => {
  try {
    return encodeURIComponent(s)
  } catch {
    return 'unencodable'
  }
}
type Case = { name: string; app: 'web' | 'backend'; method: string; path: string; body?: unknown; auth?: 'alice' | 'key' | 'csrf' }
const cases = (bad: string): Case[] => [
  { name: 'key name', app: 'web', method: 'POST', path: '/api/keys', body: { name: `k${bad}` }, auth: 'alice' },
  { name: 'profile name (PATCH)', app: 'web', method: 'PATCH', path: '/api/user', body: { name: `A${bad}` }, auth: 'alice' },
  { name: 'profile name (POST)', app: 'web', method: 'POST', path: '/api/user', body: { name: `A${bad}` }, auth: 'alice' },
  { name: 'device pairing name', app: 'web', method: 'POST', path: '/api/devices/pair', body: { name: `d${bad}` }, auth: 'alice' },
  { name: 'passkey options identifier', app: 'web', method: 'POST', path: '/api/passkey/auth/options', body: { identifier: `a${bad}@example.com` } },
  { name: 'key id in path (GET)', app: 'web', method: 'GET', path: `/api/keys/${enc(`x${bad}`)}`, auth: 'alice' },
  { name: 'key id in path (DELETE)', app: 'web', method: 'DELETE', path: `/api/keys/${enc(`x${bad}`)}`, auth: 'alice' },
  { name: 'backend userId query', app: 'backend', method: 'GET', path: `/api/registration/token?userId=${enc(`u${bad}`)}`, auth: 'key' },
  { name: 'login email', app: 'web', method: 'POST', path: '/api/auth/login', body: { email: `a${bad}@example.com`, password: 'whatever1' }, auth: 'csrf' },
]

function send(c: Case) {
  const headers: Record<string, string> = { ...BROWSER, 'cf-connecting-ip': `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` }
  if (c.body !== undefined) headers['content-type'] = 'application/json'
  if (c.auth === 'alice') headers.cookie = h.users.alice.cookie
  if (c.auth === 'csrf') headers['x-csrf-token'] = csrf
  if (c.auth === 'key') headers.authorization = `Bearer ${SHARED_KEY}`
  const init = { method: c.method, headers, body: c.body === undefined ? undefined : JSON.stringify(c.body) }
  return (c.app === 'web' ? h.web : h.backend).request(c.path, init)
}

describe.each([
  ['NUL', '\u0000'],
  ['a lone high surrogate', '\uD800'],
  ['a lone low surrogate', '\uDC00'],
])('%s in request input → 400 VALIDATION, never 500', (_label, bad) => {
  // Percent-encoding cannot carry a lone surrogate as valid UTF-8, so URL cases only apply to NUL.
  const table = cases(bad).filter((c) => bad === '\u0000' || c.body !== undefined)
  it.each(table.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const res = await send(c)
    const body = await res.json()
    expect(res.status).toBe(400)
    expect(body).toMatchObject({ code: 'VALIDATION', error: expect.any(String), issues: expect.any(Array) })
    expect(body.issues[0]).toEqual({ path: expect.any(String), message: expect.any(String) })
    expect(JSON.stringify(body)).not.toMatch(/\\u0000|\\ud8|\\udc/i) // the offending characters are never echoed
    expect(logged).not.toHaveBeenCalled()
  })
})

describe('hostile-looking but valid text passes', () => {
  it('emoji (surrogate pairs), RTL and combining marks are accepted as a key name', async () => {
    const name = 'k 🔑 ‮x́'
    const res = await send({ name: 'ok', app: 'web', method: 'POST', path: '/api/keys', body: { name }, auth: 'alice' })
    expect(res.status).toBe(201)
    expect((await res.json()).name).toBe(name)
  })

  it('an encoded percent sign (%2500) in a path is text, not a NUL', async () => {
    const res = await send({ name: 'ok', app: 'web', method: 'GET', path: '/api/keys/%2500', auth: 'alice' })
    expect(res.status).toBe(404)
  })
})

describe('database errors caused by input → 4xx with a code, no SQL', () => {
  // Routes that reach Postgres without zod (raw text, headers): the onError mapping is the backstop.
  let app: ReturnType<typeof createPlatformApp>
  beforeAll(() => {
    const router = createRouter()
    router.post('/t/raw', async (c) => {
      const text = await c.req.text()
      await asService(h.db, 'signIn', (tx) => tx.execute(sql`select ${text}::text as t`))
      return c.json({ ok: true })
    })
    router.post('/t/uuid', async (c) => {
      const text = await c.req.text()
      await asService(h.db, 'signIn', (tx) => tx.execute(sql`select ${text}::uuid as u`))
      return c.json({ ok: true })
    })
    router.post('/t/dup', async () => {
      await asService(h.db, 'signIn', (tx) => tx.insert(users).values({ email: h.users.alice.email, name: 'dup' }))
      return new Response('never')
    })
    app = createPlatformApp(() => h.services).route('/', router)
  })

  it.each([
    ['/t/raw', 'a\u0000b', 400, 'INVALID_INPUT'],
    ['/t/uuid', 'not-a-uuid', 400, 'INVALID_INPUT'],
    ['/t/dup', '', 409, 'CONFLICT'],
  ] as const)('%s %j → %i %s', async (path, payload, status, code) => {
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const res = await app.request(path, { method: 'POST', body: payload, headers: { 'content-type': 'text/plain' } })
    expect(res.status).toBe(status)
    const body = await res.json()
    expect(body.code).toBe(code)
    expect(Object.keys(body).sort()).toEqual(['code', 'error'])
    expect(JSON.stringify(body)).not.toMatch(/select|insert|uuid|not-a-uuid|alice/i)
    const event = JSON.parse(String(warned.mock.calls[0][0]))
    expect(event).toMatchObject({ event: 'request.refused_by_database', route: path, sqlstate: expect.stringMatching(/^2[23]/) })
    expect(JSON.stringify(event)).not.toMatch(/select|insert|not-a-uuid|alice/i)
  })
})

describe('echoed issue paths and messages are bounded', () => {
  it('a 3,000-character query key with a NUL value: 400, its path cut to 256 characters (code points), as documented', async () => {
    const key = '🙂'.repeat(3000)
    const res = await h.web.request(`/api/radio/live?${encodeURIComponent(key)}=%00`)
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.code).toBe('VALIDATION')
    const path = [...body.issues[0].path]
    expect(path).toHaveLength(256)
    expect(path.at(-1)).toBe('…')
    expect(path.slice(0, 255).join('')).toBe('🙂'.repeat(255))
  })
})
