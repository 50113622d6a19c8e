import { count, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { withUser } from '../../../lib/db/rls'
import { invites } from '../../../schema'
import { useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { createInvite, newCode } from './helpers'

const h = useHarness()

const ADMIN_ROUTES: Array<[string, string, unknown]> = [
  ['GET', '/api/admin/invites', undefined],
  ['POST', '/api/admin/invites', { email: 'someone@example.com' }],
]

describe('invites: access', () => {
  it.each([['POST', '/api/invite', { name: 'Alice' }] as [string, string, unknown], ...ADMIN_ROUTES])(
    '%s %s without a session → 401',
    async (method, path, body) => {
      const res = await call(h, method, path, { body })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    },
  )

  it.each(ADMIN_ROUTES)('%s %s as a non-admin → 403 ADMIN_REQUIRED, nothing created', async (method, path, body) => {
    const res = await call(h, method, path, { user: h.users.alice, body })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ error: 'Admin access required', code: 'ADMIN_REQUIRED' })
    expect(await h.db.select().from(invites).where(eq(invites.email, 'someone@example.com'))).toEqual([])
  })

  it('a session cookie from a foreign Origin cannot create an invite', async () => {
    const res = await call(h, 'POST', '/api/invite', { user: h.users.alice, body: { name: 'Alice' }, headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(403)
    expect((await res.json()).code).toBe('ORIGIN_NOT_ALLOWED')
  })
})

describe('invites: injection in names', () => {
  const payloads = [
    '<script>alert(1)</script>',
    '"><img src=x>',
    '${7*7}',
    '{{7*7}}',
    "'; DROP TABLE users; --",
    'javascript:alert(1)',
    'Robert--',
    '`id`',
    'Alice\nBob',
    'Alice\n',
    'Al\u0000ice',
    'Tab\there',
    'a/*b*/',
    '%3Cscript%3E',
    'Alice&admin=1',
  ]
  it.each(payloads)('%j → 400, nothing saved', async (name) => {
    const [{ n: before }] = await h.db.select({ n: count() }).from(invites)
    const res = await call(h, 'POST', '/api/invite', { user: h.users.alice, body: { name } })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'Name contains invalid characters', code: 'VALIDATION' })
    const [{ n: after }] = await h.db.select({ n: count() }).from(invites)
    expect(after).toBe(before)
  })

  it("a plain apostrophe is a name, not an injection (O'Brien), and cannot break out of the URL", async () => {
    const { inviteUrl } = await createInvite(h, h.users.alice, "O'Brien")
    const url = new URL(inviteUrl)
    expect([...url.searchParams.keys()]).toEqual(['token', 'name'])
    expect(url.searchParams.get('name')).toBe("O'Brien")
  })
})

describe('invites: row-level security', () => {
  it("bob's view of invites holds none of alice's, even with no where clause or a targeted one", async () => {
    const { token } = await createInvite(h, h.users.alice, 'For Alice Only')
    const bobs = await withUser(h.db, h.users.bob.id, (tx) => tx.select().from(invites))
    expect(bobs.every((i) => i.createdBy === h.users.bob.id)).toBe(true)
    expect(bobs.map((i) => i.code)).not.toContain(token)
    expect(await withUser(h.db, h.users.bob.id, (tx) => tx.select().from(invites).where(eq(invites.code, token)))).toEqual([])
  })

  it('bob cannot insert an invite in alice’s name', async () => {
    const code = newCode()
    await expect(
      withUser(h.db, h.users.bob.id, (tx) => tx.insert(invites).values({ code, name: 'Forged', audience: 'headliner', createdBy: h.users.alice.id })),
    ).rejects.toThrow()
    expect(await h.db.select().from(invites).where(eq(invites.code, code))).toEqual([])
  })

  it("bob cannot mark alice's invite used, nor take it over", async () => {
    const { token } = await createInvite(h, h.users.alice, 'Untouched')
    // Users have no UPDATE on invites at all (redeeming is the service's): 42501 permission denied.
    await expect(
      withUser(h.db, h.users.bob.id, (tx) =>
        tx.update(invites).set({ usedAt: new Date(), createdBy: h.users.bob.id }).where(eq(invites.code, token)).returning(),
      ),
    ).rejects.toMatchObject({ cause: { code: '42501' } })
    const [row] = await h.db.select().from(invites).where(eq(invites.code, token))
    expect(row).toMatchObject({ usedAt: null, createdBy: h.users.alice.id })
  })
})
