import { sql } from 'drizzle-orm'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APP_LOGIN_ROLE, openPglite, type PgliteDatabase } from '../../infra/database'
import { createNodeServices } from '../../infra/services'
import { asService, withUser } from '../../lib/db/rls'
import { users } from '../../schema'

// PGlite runs no autovacuum: the embedded server refreshes the planner's statistics itself, as the tables' owner,
// through the one function its login role may run for that (infra/database.ts `PgliteDatabase.analyze`).
const reltuples = async (d: PgliteDatabase, table: string) =>
  Number((await d.client.query<{ reltuples: number }>(`select reltuples from pg_class where relname = $1`, [table])).rows[0].reltuples)

describe('PGlite planner statistics', () => {
  let d: PgliteDatabase
  beforeAll(async () => {
    d = await openPglite()
  })
  afterAll(() => d.close())

  it('the login role cannot analyze the tables itself (it owns none); analyze() does, and the session stays unprivileged', async () => {
    await asService(d.db, 'signIn', (tx) => tx.insert(users).values(Array.from({ length: 40 }, (_, i) => ({ email: `stats-${i}@example.com`, name: `S ${i}` }))))
    await d.client.exec('analyze users') // skipped with a warning: not the owner
    expect(await reltuples(d, 'users')).toBe(-1)
    await d.analyze()
    expect(await reltuples(d, 'users')).toBe(40)
    expect((await d.client.query('select current_user, session_user')).rows).toEqual([{ current_user: APP_LOGIN_ROLE, session_user: APP_LOGIN_ROLE }])
  })

  it('the function does nothing else and is the login role\'s alone: a signed-in user\'s or the service\'s transaction may not run it', async () => {
    const refusal = (run: Promise<unknown>) => run.then(() => 'ran', (e: Error & { cause?: Error }) => e.cause?.message ?? e.message)
    expect(await refusal(withUser(d.db, crypto.randomUUID(), (tx) => tx.execute(sql`select pglite_analyze()`)))).toMatch(/permission denied for function pglite_analyze/)
    expect(await refusal(asService(d.db, 'watchdog', (tx) => tx.execute(sql`select pglite_analyze()`)))).toMatch(/permission denied for function pglite_analyze/)
    await expect(d.client.query(`select pglite_analyze('users')`)).rejects.toThrow(/does not exist/)
  })

  it('no way back to the owner from the login session (RESET / DEFAULT session authorization stay the login role)', async () => {
    await d.client.exec('reset session authorization')
    expect((await d.client.query('select current_user')).rows).toEqual([{ current_user: APP_LOGIN_ROLE }])
    await d.client.exec('set session authorization default')
    expect((await d.client.query<{ rolsuper: boolean }>('select rolsuper from pg_roles where rolname = current_user')).rows).toEqual([{ rolsuper: false }])
  })
})

describe('the local server keeps them', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'analyze-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('at start (a database opened again is planned from what it holds), and on demand', async () => {
    const env = { DATA_DIR: dataDir, LOG_REQUESTS: '0' }
    const first = await createNodeServices({ env })
    await asService(first.services.db, 'signIn', (tx) => tx.insert(users).values(Array.from({ length: 25 }, (_, i) => ({ email: `start-${i}@example.com`, name: `S ${i}` }))))
    await first.close()
    const second = await createNodeServices({ env })
    try {
      const count = async () =>
        Number((await asService(second.services.db, 'signIn', (tx) => tx.execute(sql`select reltuples from pg_class where relname = 'users'`)) as unknown as { rows: Array<{ reltuples: number }> }).rows[0].reltuples)
      expect(await count()).toBe(25)
      await asService(second.services.db, 'signIn', (tx) => tx.insert(users).values({ email: 'later@example.com', name: 'Later' }))
      await second.analyzeDatabase()
      expect(await count()).toBe(26)
    } finally {
      await second.close()
    }
  })

  it('nothing for a database the caller opened (a test\'s): it is its opener\'s to keep', async () => {
    const d = await openPglite()
    const node = await createNodeServices({ env: { DATA_DIR: dataDir, LOG_REQUESTS: '0' }, database: d })
    try {
      await node.analyzeDatabase()
      expect(await reltuples(d, 'users')).toBe(-1)
    } finally {
      await node.close()
      await d.close()
    }
  })
})
