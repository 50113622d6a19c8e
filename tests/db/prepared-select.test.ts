import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPglite, type PgliteDatabase } from '../../infra/database'
import { keepsPreparedSelects, preparedSelect } from '../../lib/db/prepared'
import { asService, transactionReader, withUser } from '../../lib/db/rls'
import { users } from '../../schema'

// lib/db/prepared.ts on the handles that do not keep statements (PGlite's reader, a transaction): built per call,
// answering as the builder would. The handles that keep them (the local Postgres reader's) are in pg-reader.test.ts.
describe('a prepared select on handles that do not keep it', () => {
  let d: PgliteDatabase
  const ids: string[] = []
  let builds = 0
  const userNamed = preparedSelect<{ name: string }, { id: string }[]>(['name'], (db, v) => {
    builds++
    return db.select({ id: users.id }).from(users).where(eq(users.name, v.name))
  })

  beforeAll(async () => {
    d = await openPglite()
    for (const name of ['Ada', "O'Brien"]) {
      const [u] = await asService(d.db, 'signIn', (tx) => tx.insert(users).values({ email: `${crypto.randomUUID()}@example.com`, name }).returning({ id: users.id }))
      ids.push(u.id)
    }
  })
  afterAll(() => d.close())

  it('is built on every call, with its values, on the PGlite reader and in a transaction', async () => {
    builds = 0
    expect(await d.reader!.asService('signIn', (db) => userNamed(db, { name: "O'Brien" }))).toEqual([{ id: ids[1] }])
    expect(await transactionReader(d.db).asService('signIn', (db) => userNamed(db, { name: 'Ada' }))).toEqual([{ id: ids[0] }])
    expect(await asService(d.db, 'signIn', async (tx) => userNamed(tx, { name: 'Ada' }))).toEqual([{ id: ids[0] }])
    expect(builds).toBe(3)
  })

  it('keeps nothing per request handle, and row isolation holds (a user sees no other user)', async () => {
    expect(await withUser(d.db, ids[0], async (tx) => userNamed(tx, { name: "O'Brien" }))).toEqual([])
  })

  it('a keeping handle builds once and binds each call', async () => {
    builds = 0
    const found = await asService(d.db, 'signIn', async (tx) => {
      const kept = keepsPreparedSelects(tx)
      return [await userNamed(kept, { name: 'Ada' }), await userNamed(kept, { name: "O'Brien" }), await userNamed(kept, { name: 'Nobody' })]
    })
    expect(found).toEqual([[{ id: ids[0] }], [{ id: ids[1] }], []])
    expect(builds).toBe(1)
  })
})
