import { eq, sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { createPlatformApp } from '../../lib/app'
import { requireSession } from '../../lib/auth/session'
import { withUser } from '../../lib/db/rls'
import { sessions, users } from '../../schema'
import { useHarness } from '../support/harness'

const h = useHarness()

// withUser runs on the app's own connection (app_api); h.db (the service's view) only checks the result.
describe(`row isolation in the database (${process.env.TEST_STORES === 'real' ? 'real Postgres' : 'PGlite'})`, () => {
  it('a user reads only their own rows even with no where clause', async () => {
    const { alice, bob } = h.users
    const bobsView = await withUser(h.services.db, bob.id, (tx) => tx.select().from(sessions))
    expect(bobsView.map((s) => s.userId)).toEqual([bob.id])
    const bobsUsers = await withUser(h.services.db, bob.id, (tx) => tx.select().from(users))
    expect(bobsUsers.map((u) => u.id)).toEqual([bob.id])
    // Explicitly asking for alice's rows finds nothing.
    const targeted = await withUser(h.services.db, bob.id, (tx) => tx.select().from(sessions).where(eq(sessions.userId, alice.id)))
    expect(targeted).toEqual([])
  })

  it("a user cannot update or delete another user's rows", async () => {
    const { alice, bob } = h.users
    const renamed = await withUser(h.services.db, bob.id, (tx) => tx.update(users).set({ name: 'pwned' }).returning())
    expect(renamed.map((u) => u.id)).toEqual([bob.id])
    const targeted = await withUser(h.services.db, bob.id, (tx) =>
      tx.update(users).set({ name: 'pwned' }).where(eq(users.id, alice.id)).returning(),
    )
    expect(targeted).toEqual([])
    const [aliceRow] = await h.db.select().from(users).where(eq(users.id, alice.id))
    expect(aliceRow.name).toBe('Alice')

    const deleted = await withUser(h.services.db, bob.id, (tx) => tx.delete(sessions).where(eq(sessions.userId, alice.id)).returning())
    expect(deleted).toEqual([])
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, alice.id))).toHaveLength(1)
  })

  it("a user cannot insert rows owned by another user", async () => {
    const { alice, bob } = h.users
    await expect(
      withUser(h.services.db, bob.id, (tx) =>
        tx.insert(sessions).values({ tokenHash: 'forged', userId: alice.id, expiresAt: new Date(Date.now() + 60_000) }),
      ),
    ).rejects.toThrow()
    expect(await h.db.select().from(sessions).where(eq(sessions.tokenHash, 'forged'))).toEqual([])
  })

  it('the user context ends with its transaction and runs as the non-superuser role', async () => {
    const inside = await withUser(h.services.db, h.users.bob.id, async (tx) => {
      const r = await tx.execute(sql`select current_user as role, current_setting('app.user_id', true) as uid`)
      return (r as unknown as { rows: Array<{ role: string; uid: string }> }).rows[0]
    })
    expect(inside).toEqual({ role: 'app_user', uid: h.users.bob.id })
    const after = await h.db.execute(sql`select current_setting('app.user_id', true) as uid`)
    const uid = (after as unknown as { rows: Array<{ uid: string | null }> }).rows[0].uid
    expect(uid === null || uid === '').toBe(true)
  })

  it('a handler that forgets its where still returns only the caller’s rows', async () => {
    const careless = createPlatformApp(() => h.services)
    careless.get('/mine', requireSession, async (c) =>
      c.json(await withUser(c.var.services.db, c.var.user!.id, (tx) => tx.select().from(sessions))),
    )
    const res = await careless.request('/mine', { headers: { cookie: h.users.alice.cookie } })
    expect(res.status).toBe(200)
    const rows = (await res.json()) as Array<{ userId: string }>
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.every((r) => r.userId === h.users.alice.id)).toBe(true)
  })
})
