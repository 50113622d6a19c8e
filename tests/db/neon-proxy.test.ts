import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from 'drizzle-orm'
import { neonDb } from '../../lib/db/neon'
import type { Db } from '../../lib/db/rls'
import { configureNeonForLocalProxy, startNeonProxy } from '../support/neon-proxy'

const url = process.env.TEST_DATABASE_URL

/** db.execute's row type is driver-generic; every driver we use returns `{ rows }`. */
async function rows<T>(db: Pick<Db, 'execute'>, query: ReturnType<typeof sql>): Promise<T[]> {
  return ((await db.execute(query)) as unknown as { rows: T[] }).rows
}

if (!url) {
  // Loud rather than silent: a green run without a database proves nothing about the Neon driver.
  console.warn('neon-proxy tests skipped: TEST_DATABASE_URL not set')
  describe.skip('Neon driver over WebSocket proxy (skipped: TEST_DATABASE_URL not set)', () => {
    it('needs a real Postgres', () => {})
  })
} else {
  describe('Neon driver over WebSocket proxy against real Postgres', () => {
    let proxy: Awaited<ReturnType<typeof startNeonProxy>>
    let neon: ReturnType<typeof neonDb>

    beforeAll(async () => {
      proxy = await startNeonProxy()
      configureNeonForLocalProxy(proxy.port)
      neon = neonDb(url) // the production factory, unchanged
    })

    afterAll(async () => {
      // Pool first, so its sockets close from the client side; then the proxy drops anything left.
      await neon?.close()
      await proxy?.close()
    })

    it('runs a simple query', async () => {
      expect(await rows<{ one: number }>(neon.db, sql`select 1 as one`)).toEqual([{ one: 1 }])
    })

    it('runs an interactive transaction on one connection', async () => {
      const seen = await neon.db.transaction(async (tx) => {
        await tx.execute(sql`set local app.neon_proxy_test = 'inside-tx'`)
        const [setting] = await rows<{ v: string }>(tx, sql`select current_setting('app.neon_proxy_test') as v`)
        // Two statements in the same transaction share one xid only if they really ran on one session.
        const [a] = await rows<{ x: string }>(tx, sql`select txid_current()::text as x`)
        const [b] = await rows<{ x: string }>(tx, sql`select txid_current()::text as x`)
        return { setting: setting.v, sameXid: a.x === b.x }
      })
      expect(seen).toEqual({ setting: 'inside-tx', sameXid: true })
    })

    it('handles 20 parallel queries', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => rows<{ n: number }>(neon.db, sql`select ${i}::int as n`)),
      )
      expect(results.map(([r]) => r.n)).toEqual(Array.from({ length: 20 }, (_, i) => i))
    })
  })
}
