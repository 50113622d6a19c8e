import { describe, expect, it } from 'vitest'
import { BROWSER, useHarness } from '../support/harness'

/**
 * Errors a newcomer meets first say how to fix them, in `hint` (or `issues[].allowed`), while `error` and `code`
 * stay the contract's: a scripted sign-up, a foreign Origin, an API key on a session-only route, an unknown debug
 * command. (A refused WebSocket upgrade's body: tests/families/permissions; the local server's own origin:
 * tests/infra/local-pages.test.ts.)
 */
const h = useHarness()

const json = { 'content-type': 'application/json' }

describe('errors that say how to fix them', () => {
  it('a scripted sign-up: 403 Bot detected, with the header a browser sends', async () => {
    const res = await h.web.request('/api/register', {
      method: 'POST',
      headers: { ...json, 'user-agent': 'curl/8.5.0' },
      body: JSON.stringify({ email: `bot-${crypto.randomUUID()}@example.com`, password: 'correct horse battery staple' }),
    })
    expect(res.status).toBe(403)
    const body = await res.json()
    expect(body).toMatchObject({ error: 'Bot detected', code: 'BOT_DETECTED' })
    expect(body.hint).toMatch(/User-Agent/)
  })

  it('a foreign Origin on a signed-in write: 403 Forbidden origin, naming the APP_ORIGIN setting', async () => {
    const res = await h.web.request('/api/keys', {
      method: 'POST',
      headers: { ...json, cookie: h.users.alice.cookie, origin: 'http://evil.example' },
      body: JSON.stringify({ name: 'k' }),
    })
    expect(res.status).toBe(403)
    const body = await res.json()
    expect(body).toMatchObject({ error: 'Forbidden origin', code: 'ORIGIN_NOT_ALLOWED' })
    expect(body.hint).toContain('APP_ORIGIN')
  })

  it('an API key on a session-only route: 401, told the route takes a session; no credentials at all: no hint', async () => {
    const created = await h.web.request('/api/keys', { method: 'POST', headers: { ...json, ...BROWSER, cookie: h.users.alice.cookie }, body: JSON.stringify({ name: 'k' }) })
    expect(created.status).toBe(201)
    const { key } = await created.json()
    const withKey = await h.web.request('/api/keys', { headers: { authorization: `Bearer ${key}` } })
    expect(withKey.status).toBe(401)
    const body = await withKey.json()
    expect(body).toMatchObject({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    expect(body.hint).toMatch(/takes a session/)

    const bare = await (await h.web.request('/api/keys')).json()
    expect(bare).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    // A bearer that is not an API key is not told about keys either.
    const other = await (await h.web.request('/api/keys', { headers: { authorization: 'Bearer not-a-key' } })).json()
    expect(other.hint).toBeUndefined()
  })

  it('an unknown debug command: 400 Command not allowed, listing the ten allowed', async () => {
    const res = await h.web.request('/api/debug', {
      method: 'POST',
      headers: { ...json, ...BROWSER, cookie: h.users.alice.cookie },
      body: JSON.stringify({ command: 'rm -rf /', agentId: 'a' }),
    })
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body).toMatchObject({ error: 'Command not allowed', code: 'VALIDATION' })
    expect(body.issues[0].allowed).toHaveLength(10)
    expect(body.issues[0].allowed).toContain('runtime.version')
    expect(body.hint).toBe(`command takes one of: ${body.issues[0].allowed.join(', ')}`)
  })
})
