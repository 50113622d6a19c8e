import { eq, sql } from 'drizzle-orm'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APP_LOGIN_ROLE, openPglite, type PgliteDatabase } from '../../infra/database'
import { createNodeServices } from '../../infra/services'
import { asService, withUser } from '../../lib/db/rls'
import { users } from '../../schema'

// PGlite runs no autovacuum: the embedded server keeps its tables itself (VACUUM (ANALYZE), infra/database.ts
// `PgliteDatabase.maintain`), its login role holding pg_maintain for that and nothing more.
const stats = async (d: PgliteDatabase, table: string) =>
  (await d.client.query<{ reltuples: number; dead: number }>(`select c.reltuples, s.n_dead_tup as dead from pg_class c join pg_stat_user_tables s on s.relid = c.oid where c.relname = $1`, [table])).rows[0]

describe('PGlite upkeep', () => {
  let d: PgliteDatabase
  beforeAll(async () => {
    d = await openPglite()
  })
  afterAll(() => d.close())

  it('maintain() refreshes the planner statistics and reclaims dead rows; the session stays the login role', async () => {
    const rows = await asService(d.db, 'signIn', (tx) => tx.insert(users).values(Array.from({ length: 40 }, (_, i) => ({ email: `upkeep-${i}@example.com`, name: `U ${i}` }))).returning({ id: users.id }))
    for (const { id } of rows.slice(0, 10)) await asService(d.db, 'signIn', (tx) => tx.update(users).set({ name: 'Renamed' }).where(eq(users.id, id)))
    expect(Number((await stats(d, 'users')).reltuples)).toBe(-1) // never analyzed
    await d.maintain()
    const after = await stats(d, 'users')
    expect(Number(after.reltuples)).toBe(40)
    expect(Number(after.dead)).toBe(0)
    expect((await d.client.query('select current_user, session_user')).rows).toEqual([{ current_user: APP_LOGIN_ROLE, session_user: APP_LOGIN_ROLE }])
  })

  it("the roles a request runs as do not hold it: a signed-in user's or the service's ANALYZE is skipped", async () => {
    await asService(d.db, 'signIn', (tx) => tx.insert(users).values({ email: 'one-more@example.com', name: 'One more' }))
    await withUser(d.db, crypto.randomUUID(), (tx) => tx.execute(sql`analyze users`))
    await asService(d.db, 'watchdog', (tx) => tx.execute(sql`analyze users`))
    expect(Number((await stats(d, 'users')).reltuples)).toBe(40)
  })

  it('it grants no row: the login role alone still may not read a table', async () => {
    await expect(d.client.query('select count(*) from users')).rejects.toThrow(/permission denied for table users/)
  })

  it('no way back to the owner from the login session (RESET / DEFAULT session authorization stay the login role)', async () => {
    await d.client.exec('reset session authorization')
    expect((await d.client.query('select current_user')).rows).toEqual([{ current_user: APP_LOGIN_ROLE }])
    await d.client.exec('set session authorization default')
    expect((await d.client.query<{ rolsuper: boolean }>('select rolsuper from pg_roles where rolname = current_user')).rows).toEqual([{ rolsuper: false }])
  })
})

describe('the local server keeps it', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'upkeep-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
  const reltuples = async (node: Awaited<ReturnType<typeof createNodeServices>>) =>
    Number(
      ((await asService(node.services.db, 'signIn', (tx) => tx.execute(sql`select reltuples from pg_class where relname = 'users'`))) as unknown as { rows: Array<{ reltuples: number }> }).rows[0]
        .reltuples,
    )

  it('at start (a database opened again is planned from what it holds), and on demand', async () => {
    const env = { DATA_DIR: dataDir, LOG_REQUESTS: '0' }
    const first = await createNodeServices({ env })
    await asService(first.services.db, 'signIn', (tx) => tx.insert(users).values(Array.from({ length: 25 }, (_, i) => ({ email: `start-${i}@example.com`, name: `S ${i}` }))))
    await first.close()
    const second = await createNodeServices({ env })
    try {
      expect(await reltuples(second)).toBe(25)
      await asService(second.services.db, 'signIn', (tx) => tx.insert(users).values({ email: 'later@example.com', name: 'Later' }))
      await second.maintainDatabase()
      expect(await reltuples(second)).toBe(26)
    } finally {
      await second.close()
    }
  })

  it("nothing for a database the caller opened (a test's): it is its opener's to keep", async () => {
    const d = await openPglite()
    const node = await createNodeServices({ env: { DATA_DIR: dataDir, LOG_REQUESTS: '0' }, database: d })
    try {
      await node.maintainDatabase()
      expect(Number((await stats(d, 'users')).reltuples)).toBe(-1)
    } finally {
      await node.close()
      await d.close()
    }
  })
})
