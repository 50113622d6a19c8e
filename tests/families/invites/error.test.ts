import { eq } from 'drizzle-orm'
import { describe, expect, it, vi } from 'vitest'
import { app as invitesApp } from '../../../functions/invites/app'
import { createPlatformApp } from '../../../lib/app'
import type { Services } from '../../../lib/context'
import { invites } from '../../../schema'
import { BROWSER, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { insertInvite, listInvites, newCode, verify } from './helpers'

const h = useHarness()

const validation = (error: string) => expect.objectContaining({ error, code: 'VALIDATION', issues: expect.any(Array) })

describe('POST /api/invite: errors', () => {
  it.each([
    ['missing name', {}, 'Name is required'],
    ['empty name', { name: '' }, 'Name is required'],
    ['only spaces', { name: '    ' }, 'Name is required'],
    ['a number', { name: 42 }, 'Name must be a string'],
    ['null', { name: null }, 'Name must be a string'],
    ['65 characters', { name: 'x'.repeat(65) }, 'Name must be at most 64 characters'],
    ['punctuation only', { name: "'.-" }, 'Name contains invalid characters'],
  ])('%s → 400', async (_, body, error) => {
    const res = await call(h, 'POST', '/api/invite', { user: h.users.alice, body })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(validation(error))
  })

  it('a body that is not an object, or not JSON, is 400', async () => {
    const arr = await call(h, 'POST', '/api/invite', { user: h.users.alice, body: ['Alice'] })
    expect(arr.status).toBe(400)
    expect(await arr.json()).toEqual(validation('Request body must be a JSON object'))
    const bad = await call(h, 'POST', '/api/invite', { user: h.users.alice, body: '{"name":' })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('404 User not found when the session user has no row (and nothing is saved)', async () => {
    // readSession returns a user already on the context, standing in for a row deleted mid-request.
    const app = createPlatformApp(() => h.services)
    app.use('*', async (c, next) => {
      c.set('user', { id: 'no-such-user', email: 'ghost@example.com', name: 'Ghost', isAdmin: false })
      await next()
    })
    app.route('/', invitesApp)
    const res = await app.request('/api/invite', { method: 'POST', headers: { 'content-type': 'application/json', ...BROWSER }, body: JSON.stringify({ name: 'Ghost' }) })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'User not found', code: 'USER_NOT_FOUND' })
    expect(await h.db.select().from(invites).where(eq(invites.createdBy, 'no-such-user'))).toEqual([])
  })
})

describe('POST /api/invites/verify: errors', () => {
  it.each([
    ['63 hex', 'a'.repeat(63)],
    ['65 hex', 'a'.repeat(65)],
    ['non-hex', 'g'.repeat(64)],
    ['hex with a space', `${'a'.repeat(63)} `],
    ['empty', ''],
    ['a number', 1234],
    ['null', null],
    ['an array', ['a'.repeat(64)]],
    ['missing', undefined],
  ])('%s → 400 Invalid invite token', async (_, token) => {
    const res = await call(h, 'POST', '/api/invites/verify', { body: token === undefined ? {} : { token } })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(validation('Invalid invite token'))
  })

  it('unknown token → 404 Invite not found', async () => {
    const res = await verify(h, newCode())
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Invite not found', code: 'NOT_FOUND' })
  })

  it('used → 410 Invite already used', async () => {
    const row = await insertInvite(h, { usedAt: new Date(Date.now() - 1000) })
    const res = await verify(h, row.code)
    expect(res.status).toBe(410)
    expect(await res.json()).toEqual({ error: 'Invite already used', code: 'INVITE_USED' })
  })

  it('expired → 410 Invite expired', async () => {
    const row = await insertInvite(h, { expiresAt: new Date(Date.now() - 60_000) })
    const res = await verify(h, row.code)
    expect(res.status).toBe(410)
    expect(await res.json()).toEqual({ error: 'Invite expired', code: 'INVITE_EXPIRED' })
  })

  it('expiry boundary: expiresAt = now - 1 ms is expired, now + 1 s is still active (verify and list agree)', async () => {
    const justPast = await insertInvite(h, { email: 'past@example.com', expiresAt: new Date(Date.now() - 1) })
    const justAhead = await insertInvite(h, { email: 'ahead@example.com', expiresAt: new Date(Date.now() + 1000) })
    const [pastRes, aheadRes] = [await verify(h, justPast.code), await verify(h, justAhead.code)]
    expect(pastRes.status).toBe(410)
    expect(await pastRes.json()).toEqual({ error: 'Invite expired', code: 'INVITE_EXPIRED' })
    expect(aheadRes.status).toBe(200)
    const byCode = new Map((await listInvites(h)).invites.map((i) => [i.code, i.status]))
    expect(byCode.get(justPast.code)).toBe('expired')
    expect(byCode.get(justAhead.code)).toBe('active')
  })
})

describe('POST /api/admin/invites: errors', () => {
  const admin = (body: unknown) => call(h, 'POST', '/api/admin/invites', { user: h.users.admin, body })
  it.each([
    ['missing email', {}, 'Email is required'],
    ['bad email', { email: 'not-an-email' }, 'Invalid email'],
    ['email not a string', { email: 7 }, 'Email is required'],
    ['bad audience', { email: 'x@example.com', audience: 'vip' }, 'Invalid audience'],
    ['audience in the wrong case', { email: 'x@example.com', audience: 'Headliner' }, 'Invalid audience'],
    ['past date', { email: 'x@example.com', expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt must be in the future'],
    ['not a date', { email: 'x@example.com', expiresAt: 'tomorrow' }, 'Invalid expiresAt: expected an ISO 8601 date-time'],
    ['date without a time zone', { email: 'x@example.com', expiresAt: '2999-01-01T00:00:00' }, 'Invalid expiresAt: expected an ISO 8601 date-time'],
    ['impossible date', { email: 'x@example.com', expiresAt: '2999-02-30T00:00:00Z' }, 'Invalid expiresAt: expected an ISO 8601 date-time'],
    ['expiresAt a number', { email: 'x@example.com', expiresAt: Date.now() + 60_000 }, 'Invalid expiresAt: expected an ISO 8601 date-time'],
  ])('%s → 400', async (_, body, error) => {
    const res = await admin(body)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(validation(error))
    expect(await h.db.select().from(invites).where(eq(invites.email, 'x@example.com'))).toEqual([])
  })
})

describe('GET /api/admin/invites: the 200 cap', () => {
  it('returns the newest 200 of 205, with total 205 and active counted over all', async () => {
    await h.db.delete(invites) // this file's own database: start the count from zero
    const base = Date.now() - 10 * 60_000
    const rows = Array.from({ length: 205 }, (_, i) => ({
      code: newCode(),
      email: `bulk${i}@example.com`,
      createdAt: new Date(base + i * 1000),
      // the 3 oldest used and the next 2 expired: all beyond the page, still counted
      usedAt: i < 3 ? new Date(base) : null,
      expiresAt: i >= 3 && i < 5 ? new Date(base) : null,
    }))
    await h.db.insert(invites).values(rows)
    const list = await listInvites(h)
    expect(list.invites).toHaveLength(200)
    expect(list.total).toBe(205)
    expect(list.active).toBe(200)
    expect(list.invites[0].email).toBe('bulk204@example.com')
    expect(list.invites[199].email).toBe('bulk5@example.com')
  })
})

describe('deprecated routes', () => {
  it.each([
    ['/api/invite/generate', '/api/invite'],
    ['/api/invite/validate', '/api/invites/verify'],
  ])('POST %s → 410 naming its successor', async (path, successor) => {
    for (const user of [undefined, h.users.alice]) {
      const res = await call(h, 'POST', path, { user, body: { name: 'x', token: 'y' } })
      expect(res.status).toBe(410)
      expect(await res.json()).toEqual({ error: `Gone: use POST ${successor}`, code: 'DEPRECATED' })
      expect(res.headers.get('link')).toBe(`<${successor}>; rel="successor-version"`)
    }
  })
})

describe('store failures', () => {
  it.each([
    ['POST', '/api/invites/verify', { token: 'a'.repeat(64) }],
    ['POST', '/api/invite', { name: 'Alice' }],
    ['GET', '/api/admin/invites', undefined],
    ['POST', '/api/admin/invites', { email: 'x@example.com' }],
  ])('%s %s → 500 Internal server error, nothing leaked', async (method, path, body) => {
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {})
    const broken = createPlatformApp(() =>
      Object.create(h.services, {
        db: {
          get() {
            throw new Error('connection to db.internal:5432 refused')
          },
        },
      }) as Services,
    ).route('/', invitesApp)
    const res = await broken.request(path, {
      method,
      headers: { 'content-type': 'application/json', ...BROWSER, cookie: h.users.admin.cookie },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    quiet.mockRestore()
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Internal server error', code: 'INTERNAL' })
  })
})
