import { eq, sql, type SQL } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { APP_LOGIN_ROLE } from '../../infra/database'
import type { Db } from '../../lib/db/rls'
import { withUser } from '../../lib/db/rls'
import { users } from '../../schema'
import { type SeededUser, useHarness } from '../support/harness'
import { realStores } from '../support/stores'
import { TABLES } from './tables'

// #9 finding 5. Everything here runs on the app's own connection (`h.services.db`: app_api on Postgres, the
// PGlite session after SET SESSION AUTHORIZATION app_api), directly in SQL; `h.db` only seeds and checks.
let app: Db
let alice: SeededUser
let bob: SeededUser
let carol: SeededUser
const h = useHarness()
beforeAll(async () => {
  app = h.services.db
  ;({ alice, bob } = h.users)
  carol = await h.seedUser('Carol', 'carol@example.com')
  for (const t of TABLES) await t.seed?.(h, { alice, carol })
})

type Outcome = number | 'denied'
const rowsOf = (r: unknown) => (r as { rows: Record<string, unknown>[] }).rows
const sqlState = (e: unknown) => (e as { cause?: { code?: string } }).cause?.code ?? (e as { code?: string }).code

/** Rows the statement returned, or `denied` for 42501 (no privilege, or a row-level policy refused the row). */
async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return rowsOf(await run()).length
  } catch (e) {
    if (sqlState(e) === '42501') return 'denied'
    throw e
  }
}
const asUserSql = (userId: string, q: SQL) => outcome(() => withUser(app, userId, (tx) => tx.execute(q)))
const id = sql.identifier

/** Alice's rows of a table as the service sees them: every attack must leave them exactly so. */
const alicesRows = (table: string, owner: string) =>
  h.db.execute(sql`select to_jsonb(t) as j from ${id(table)} t where ${id(owner)} = ${alice.id} order by to_jsonb(t)::text`).then(rowsOf)

describe(`the app connects as ${APP_LOGIN_ROLE} (${process.env.TEST_STORES === 'real' ? 'real Postgres' : 'PGlite'})`, () => {
  it('every table in the database has FORCE ROW LEVEL SECURITY and is in the attacked list', async () => {
    const catalog = rowsOf(
      await h.db.execute(sql`select c.relname as name, c.relrowsecurity as rls, c.relforcerowsecurity as forced
        from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind in ('r', 'p')`),
    )
    expect(catalog.map((r) => r.name).sort()).toEqual(TABLES.map((t) => t.name).sort())
    for (const r of catalog) expect({ name: r.name, rls: r.rls, forced: r.forced }).toEqual({ name: r.name, rls: true, forced: true })
  })

  it('the app role logs in, owns nothing, inherits nothing and holds no table privilege of its own', async () => {
    const [who] = rowsOf(await app.execute(sql`select session_user as s, current_user as c`))
    expect(who).toEqual({ s: APP_LOGIN_ROLE, c: APP_LOGIN_ROLE })
    const [role] = rowsOf(
      await h.db.execute(sql`select rolinherit, rolsuper, rolbypassrls,
        (select count(*)::int from pg_class where relowner = r.oid) as owned,
        (select count(*)::int from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = 'public' and c.relkind = 'r'
          and has_table_privilege(r.oid, c.oid, 'SELECT,INSERT,UPDATE,DELETE')) as privileged
        from pg_roles r where rolname = ${APP_LOGIN_ROLE}`),
    )
    expect(role).toEqual({ rolinherit: false, rolsuper: false, rolbypassrls: false, owned: 0, privileged: 0 })
    // What it does inherit: on the embedded PGlite only, pg_maintain (VACUUM, ANALYZE: no autovacuum runs there).
    const inherited = rowsOf(
      await h.db.execute(sql`select rolname as name from pg_roles
        where rolname <> ${APP_LOGIN_ROLE} and pg_has_role(${APP_LOGIN_ROLE}, oid, 'USAGE') order by 1`),
    )
    expect(inherited).toEqual(realStores ? [] : [{ name: 'pg_maintain' }])
  })

  for (const t of TABLES) {
    describe(t.name, () => {
      const T = id(t.name)
      const own = id(t.owner)

      it('outside withUser/asService every statement is refused (permission denied)', async () => {
        expect(await outcome(() => app.execute(sql`select 1 from ${T}`))).toBe('denied')
        expect(await outcome(() => app.execute(sql`update ${T} set ${id(t.update)} = ${id(t.update)} returning 1`))).toBe('denied')
        expect(await outcome(() => app.execute(sql`delete from ${T} returning 1`))).toBe('denied')
      })

      it('RESET ROLE inside withUser lands on the app role, which reads and writes nothing', async () => {
        const read = await outcome(() =>
          withUser(app, bob.id, async (tx) => {
            await tx.execute(sql`reset role`)
            return tx.execute(sql`select 1 from ${T}`)
          }),
        )
        expect(read).toBe('denied')
        const write = await outcome(() =>
          withUser(app, alice.id, async (tx) => {
            await tx.execute(sql`set local role none`)
            return tx.execute(sql`delete from ${T} where ${own} = ${alice.id} returning 1`)
          }),
        )
        expect(write).toBe('denied')
      })

      it("as bob: alice's rows cannot be read, updated, deleted or forged, with or without a where", async () => {
        const before = await alicesRows(t.name, t.owner)
        expect(before.length).toBeGreaterThan(0)
        const g = t.grants
        // A public table (the skills catalog) is readable by everyone; its writes are still refused below.
        const visible = t.publicRead ? before.length : 0
        expect(await asUserSql(bob.id, sql`select 1 from ${T} where ${own} = ${alice.id}`)).toBe(g.select ? visible : 'denied')
        const all = await asUserSql(bob.id, sql`select 1 from ${T} where ${own} is distinct from ${bob.id}`)
        if (t.publicRead) expect(all).toBeGreaterThanOrEqual(visible)
        else expect(all).toBe(g.select ? 0 : 'denied')
        const up = id(t.update)
        expect(await asUserSql(bob.id, sql`update ${T} set ${up} = ${up} where ${own} = ${alice.id} returning 1`)).toBe(g.update ? 0 : 'denied')
        expect(await asUserSql(bob.id, sql`update ${T} set ${up} = ${up} returning 1`)).toBe(g.update ? (t.name === 'users' ? 1 : 0) : 'denied')
        expect(await asUserSql(bob.id, sql`delete from ${T} where ${own} = ${alice.id} returning 1`)).toBe(g.delete ? 0 : 'denied')
        // A copy of alice's row (new primary key, still hers) inserted by bob.
        const forged = { ...(before[0].j as Record<string, unknown>), ...keyOverride(t.name) }
        const insert = sql`insert into ${T} select * from jsonb_populate_record(null::${T}, ${JSON.stringify(forged)}::jsonb) returning 1`
        expect(await asUserSql(bob.id, insert)).toBe('denied')
        expect(await alicesRows(t.name, t.owner)).toEqual(before)
      })
    })
  }
})

/** A fresh primary key (and unique email) so a forged copy could only fail for lack of rights. */
function keyOverride(table: string): Record<string, string> {
  const fresh = `forged-${crypto.randomUUID()}`
  const keys: Record<string, string> = { sessions: 'token_hash', password_resets: 'token_hash', email_verifications: 'token_hash', invites: 'code', security_events: 'jti', referrals: 'referred_id' }
  if (table === 'users') return { id: fresh, email: `${fresh}@example.com`, referral_code: fresh }
  if (table === 'referrals') return { referred_id: bob.id }
  return { [keys[table] ?? 'id']: fresh }
}

describe('self-escalation: a user changes only the profile fields the API lets them change', () => {
  const mine = () => sql`where id = ${alice.id} returning 1`
  const refused: Array<[string, () => SQL]> = [
    ['users.plan', () => sql`update users set plan = 'network' ${mine()}`],
    ['users.credits', () => sql`update users set credits = 999999 ${mine()}`],
    ['users.credit_units', () => sql`update users set credit_units = 99 ${mine()}`],
    ['users.email', () => sql`update users set email = 'admin@example.com' ${mine()}`],
    ['users.email_verified_at', () => sql`update users set email_verified_at = now() ${mine()}`],
    ['users.referral_code', () => sql`update users set referral_code = 'VANITY' ${mine()}`],
    ['users.subscription_status', () => sql`update users set subscription_status = 'active', subscription_id = 'sub_x' ${mine()}`],
    ['users.trial_ends_at', () => sql`update users set trial_started_at = now(), trial_ends_at = now() + interval '10 years' ${mine()}`],
    ['users.welcome_sent_at', () => sql`update users set welcome_sent_at = null ${mine()}`],
    ['users.id', () => sql`update users set id = 'someone-else' ${mine()}`],
    ['INSERT users', () => sql`insert into users (id, email, name) values ('sock', 'sock@example.com', 'Sock') returning 1`],
    ['INSERT referrals', () => sql`insert into referrals (referred_id, referrer_id, credits) values (${bob.id}, ${alice.id}, 1000) returning 1`],
    ['referrals.credits', () => sql`update referrals set credits = 1000000, credited_at = null returning 1`],
    ['api_keys.user_id', () => sql`update api_keys set user_id = ${alice.id} returning 1`],
    ['api_keys.key_sha256', () => sql`update api_keys set key_sha256 = 'chosen' returning 1`],
    ['sessions.expires_at', () => sql`update sessions set expires_at = now() + interval '100 years' returning 1`],
    ['INSERT sessions', () => sql`insert into sessions (token_hash, user_id, expires_at) values ('mine', ${alice.id}, now() + interval '1 day') returning 1`],
    ['INSERT accounts (link a victim’s Google subject)', () => sql`insert into accounts (id, user_id, provider, provider_account_id) values ('a', ${alice.id}, 'google', 'victim') returning 1`],
    ['accounts.sign_in_disabled', () => sql`update accounts set sign_in_disabled = false returning 1`],
    ['passkeys.counter', () => sql`update passkeys set counter = 0 returning 1`],
    ['INSERT invites (choosing the audience)', () => sql`insert into invites (code, audience, created_by) values ('own', 'network', ${alice.id}) returning 1`],
    ['INSERT email_verifications', () => sql`insert into email_verifications (token_hash, user_id, email, expires_at) values ('t', ${alice.id}, 'admin@example.com', now() + interval '1 day') returning 1`],
    ['INSERT password_resets', () => sql`insert into password_resets (token_hash, user_id, expires_at) values ('t', ${alice.id}, now() + interval '1 day') returning 1`],
    ['devices.user_id', () => sql`update devices set user_id = ${alice.id}, pairing_code = 'X' returning 1`],
    ['installations.user_id', () => sql`update installations set user_id = ${alice.id}, registered_at = now() returning 1`],
    ['security_events', () => sql`update security_events set outcome = 'ok' returning 1`],
  ]
  for (const [what, q] of refused) {
    it(`${what} is refused on alice's own rows`, async () => {
      const [before] = await h.db.select().from(users).where(eq(users.id, alice.id))
      expect(await asUserSql(alice.id, q())).toBe('denied')
      expect((await h.db.select().from(users).where(eq(users.id, alice.id)))[0]).toEqual(before)
    })
  }

  it('the permitted profile update (name, password, updated_at) still works, on her row only', async () => {
    expect(await asUserSql(alice.id, sql`update users set name = 'Alice B', updated_at = now() returning 1`)).toBe(1)
    expect(await asUserSql(alice.id, sql`update users set password_hash = 'new-hash' ${mine()}`)).toBe(1)
    const [row] = await h.db.select().from(users).where(eq(users.id, alice.id))
    expect(row).toMatchObject({ name: 'Alice B', passwordHash: 'new-hash', credits: 0, plan: null })
    expect((await h.db.select().from(users).where(eq(users.id, bob.id)))[0].name).toBe('Bob')
  })
})

describe('the service role from inside withUser', () => {
  it('app_user is not a member of app_service; SET ROLE is checked against the session user', async () => {
    const [m] = rowsOf(
      await h.db.execute(sql`select pg_has_role('app_user', 'app_service', 'MEMBER') as user_in_service,
        pg_has_role(${APP_LOGIN_ROLE}, 'app_service', 'MEMBER') as api_in_service`),
    )
    expect(m).toEqual({ user_in_service: false, api_in_service: true })
    // Postgres checks SET ROLE against the session user (app_api, which asService needs in app_service), not
    // against app_user: SQL run on the app's connection can reach the service role. This pins that limit
    // (README, "Row isolation"): it holds only because no route runs SQL taken from input.
    const seen = await outcome(() =>
      withUser(app, bob.id, async (tx) => {
        await tx.execute(sql`set local role app_service`)
        return tx.execute(sql`select 1 from users where id = ${alice.id}`)
      }),
    )
    expect(seen).toBe(1)
  })
})
