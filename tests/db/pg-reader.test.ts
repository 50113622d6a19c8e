import { eq, sql } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APP_LOGIN_ROLE, migratePostgres, openPostgres, type NodeDatabase } from '../../infra/database'
import { preparedSelect } from '../../lib/db/prepared'
import { apiKeys, users } from '../../schema'
import { ensureTestRole } from '../support/stores'

// The local server's reader on real Postgres (DATABASE_URL without Neon): a lone select as one simple query (BEGIN
// READ ONLY, the settings, the select with its parameters inlined, COMMIT); otherwise BEGIN and the settings as one
// simple query, the statements, COMMIT after the answer for reads.
const url = process.env.TEST_DATABASE_URL

if (!url) {
  console.warn('pg-reader tests skipped: TEST_DATABASE_URL not set')
  describe.skip('node-postgres Reader (skipped: TEST_DATABASE_URL not set)', () => {
    it('needs a real Postgres', () => {})
  })
} else {
  describe('node-postgres Reader on real Postgres', () => {
    const name = `t_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`
    const admin = new pg.Client({ connectionString: url })
    let database: NodeDatabase
    let statements = 0
    const ids = { alice: '', bob: '' }

    beforeAll(async () => {
      await admin.connect()
      await admin.query(`create database ${name}`)
      const owner = Object.assign(new URL(url), { pathname: `/${name}` })
      await migratePostgres(owner.toString())
      await ensureTestRole(admin) // lets the drop below end app_api backends that outlive the closed pool
      // Count what the pool's clients send (patched before the pool connects: it wraps each client's query).
      const original = pg.Client.prototype.query
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        statements++
        return (original as (...a: unknown[]) => unknown).apply(this, args)
      } as typeof original
      database = await openPostgres(Object.assign(new URL(owner), { username: APP_LOGIN_ROLE }).toString(), { migrate: false })
      const reader = database.reader!
      for (const who of ['alice', 'bob'] as const) {
        const [u] = await reader.asService('signIn', (db) => db.insert(users).values({ email: `${who}-${name}@example.com`, name: who }).returning())
        ids[who] = u.id
        await reader.asUser(u.id, (db) => db.insert(apiKeys).values({ userId: u.id, name: `${who} key`, prefix: 'sk_0000000', keyHash: 'x', keySha256: crypto.randomUUID() }))
      }
    })
    afterAll(async () => {
      await database?.close()
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    })

    it('a read of one select is one round trip, and row isolation holds without a where', async () => {
      statements = 0
      const keys = await database.reader!.asUser(ids.alice, (db) => db.select({ name: apiKeys.name }).from(apiKeys))
      expect(keys).toEqual([{ name: 'alice key' }])
      expect(statements).toBe(1)
    })

    it('a read of several selects: begin + settings, each select, then COMMIT sent as the answer returns', async () => {
      statements = 0
      const keys = await database.reader!.asUser(ids.alice, (db) => [db.select({ name: users.name }).from(users), db.select({ name: apiKeys.name }).from(apiKeys)])
      expect(keys).toEqual([{ name: 'alice key' }])
      expect(statements).toBe(4)
    })

    it('inlined parameters read as the values they were, whatever their quotes and backslashes', async () => {
      const reader = database.reader!
      const odd = `o'brien \\ "x" $1 \\' -- ;`
      await reader.asUser(ids.bob, (db) => db.insert(apiKeys).values({ userId: ids.bob, name: odd, prefix: 'sk_0000001', keyHash: 'x', keySha256: crypto.randomUUID() }))
      const [byName] = await reader.asUser(ids.bob, (db) => db.select({ name: apiKeys.name, userId: apiKeys.userId }).from(apiKeys).where(eq(apiKeys.name, odd)).limit(1))
      expect(byName).toEqual({ name: odd, userId: ids.bob })
      // Alice's read of Bob's key by its name finds nothing: the select ran under her settings.
      expect(await reader.asUser(ids.alice, (db) => db.select().from(apiKeys).where(eq(apiKeys.name, odd)))).toEqual([])
      // A value that cannot be a literal (a NUL) goes as a parameter: Postgres refuses it as it always did.
      await expect(reader.asUser(ids.bob, (db) => db.select().from(apiKeys).where(eq(apiKeys.name, 'a\0b')))).rejects.toThrow()
      await reader.asUser(ids.bob, (db) => db.delete(apiKeys).where(eq(apiKeys.name, odd)))
    })

    it('a failed one-trip read rolls back: the connection serves the next read', async () => {
      const reader = database.reader!
      await Promise.all(Array.from({ length: 12 }, () => reader.asUser(ids.alice, (db) => db.select().from(apiKeys).where(sql`1/0 = 1`)).catch(() => null)))
      expect(await reader.asUser(ids.alice, (db) => db.select({ name: apiKeys.name }).from(apiKeys))).toEqual([{ name: 'alice key' }])
    })

    it('writes commit before the answer, and a failed one rolls back', async () => {
      const reader = database.reader!
      await reader.asUser(ids.bob, (db) => db.update(users).set({ name: 'Bobby' }).where(eq(users.id, ids.bob)))
      const [bob] = await reader.asService('signIn', (db) => db.select({ name: users.name }).from(users).where(eq(users.id, ids.bob)))
      expect(bob.name).toBe('Bobby')
      await expect(reader.asUser(ids.bob, (db) => [db.update(users).set({ name: 'Lost' }).where(eq(users.id, ids.bob)), db.execute(sql`select 1/0`)])).rejects.toThrow()
      const [after] = await reader.asService('signIn', (db) => db.select({ name: users.name }).from(users).where(eq(users.id, ids.bob)))
      expect(after.name).toBe('Bobby')
    })

    it('connections go back to the pool as the login role, which sees nothing', async () => {
      await Promise.all(Array.from({ length: 12 }, () => database.reader!.asUser(ids.alice, (db) => db.select().from(apiKeys))))
      await new Promise((r) => setTimeout(r, 50)) // the reads' COMMITs
      const refused = await database.db.select().from(apiKeys).then(() => null, (e: Error) => e)
      expect(String((refused?.cause as Error | undefined)?.message)).toMatch(/permission denied/)
    })

    describe('a prepared select', () => {
      let builds = 0
      const keysNamed = preparedSelect<{ userId: string; name: string }, { name: string; userId: string }[]>(['userId', 'name'], (db, v) => {
        builds++
        return db.select({ name: apiKeys.name, userId: apiKeys.userId }).from(apiKeys).where(sql`${apiKeys.userId} = ${v.userId} and ${apiKeys.name} like ${v.name} escape ''`)
      })

      it('is built once per pooled connection, its values bound per call, still one round trip', async () => {
        const reader = database.reader!
        for (let i = 0; i < 3; i++) {
          statements = 0
          expect(await reader.asUser(ids.alice, (db) => keysNamed(db, { userId: ids.alice, name: '%key' }))).toEqual([{ name: 'alice key', userId: ids.alice }])
          expect(statements).toBe(1)
          expect(await reader.asUser(ids.bob, (db) => keysNamed(db, { userId: ids.bob, name: 'bob%' }))).toEqual([{ name: 'bob key', userId: ids.bob }])
        }
        // At most one build per connection the pool opened (the reads above ran one at a time: one connection).
        expect(builds).toBe(1)
        await Promise.all(Array.from({ length: 20 }, () => reader.asUser(ids.alice, (db) => keysNamed(db, { userId: ids.alice, name: '%' }))))
        expect(builds).toBeGreaterThan(1)
        expect(builds).toBeLessThanOrEqual(10) // the pool's size
      })

      it("row isolation holds for values bound to a statement built under another user's settings", async () => {
        const reader = database.reader!
        await reader.asUser(ids.bob, (db) => keysNamed(db, { userId: ids.bob, name: '%' }))
        expect(await reader.asUser(ids.alice, (db) => keysNamed(db, { userId: ids.bob, name: '%' }))).toEqual([])
      })

      it('inlines odd values as the values they were, and runs beside other statements', async () => {
        const reader = database.reader!
        const odd = `o'brien \\ "x" $1 \\' -- ;`
        await reader.asUser(ids.bob, (db) => db.insert(apiKeys).values({ userId: ids.bob, name: odd, prefix: 'sk_0000002', keyHash: 'x', keySha256: crypto.randomUUID() }))
        expect(await reader.asUser(ids.bob, (db) => keysNamed(db, { userId: ids.bob, name: odd }))).toEqual([{ name: odd, userId: ids.bob }])
        statements = 0
        const both = await reader.asUser(ids.bob, (db) => [db.select({ name: users.name }).from(users), keysNamed(db, { userId: ids.bob, name: odd })])
        expect(both).toEqual([{ name: odd, userId: ids.bob }])
        expect(statements).toBe(4) // begin + settings, each select, commit: read only, as with builders
        await reader.asUser(ids.bob, (db) => db.delete(apiKeys).where(eq(apiKeys.name, odd)))
      })
    })

    it('refuses an id it would have to inline unsafely', async () => {
      await expect(database.reader!.asUser("x'; drop table users; --", (db) => db.select().from(apiKeys))).rejects.toThrow('unexpected user id shape')
    })
  })
}
