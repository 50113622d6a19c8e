import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { withUser } from '../../../lib/db/rls'
import { passkeys, sessions } from '../../../schema'
import { useHarness } from '../../support/harness'
import { expectOwnRowsOnly } from '../../support/rls'
import { SoftAuthenticator } from './authenticator'
import { authOptions, authVerify, call, enrol, RP, registerOptions, registerVerify, sessionCookie, sessionUser, signIn } from './helpers'
import { FORBIDDEN_ORIGIN } from '../../support/requests'

let aliceKey: SoftAuthenticator
let bobKey: SoftAuthenticator
const h = useHarness()
beforeAll(async () => {
  aliceKey = await enrol(h, h.users.alice, 'alice-laptop')
  bobKey = await enrol(h, h.users.bob, 'bob-phone')
})

const aliceRow = async () => (await h.db.select().from(passkeys).where(eq(passkeys.id, aliceKey.id)))[0]

describe('passkeys: challenges are bound', () => {
  it("a register challenge issued to bob can't be used by alice, and bob can still use it", async () => {
    const bobs = await registerOptions(h, h.users.bob)
    const fresh = new SoftAuthenticator(RP)
    const credential = fresh.register({ challenge: bobs.options.challenge })
    const res = await registerVerify(h, h.users.alice, { credential, challenge: bobs.challenge })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid or expired challenge', code: 'CHALLENGE_INVALID' })
    expect(await h.db.select().from(passkeys).where(eq(passkeys.id, fresh.id))).toEqual([])
    expect((await registerVerify(h, h.users.bob, { credential, challenge: bobs.challenge })).status).toBe(200)
    expect((await h.db.select().from(passkeys).where(eq(passkeys.id, fresh.id)))[0].userId).toBe(h.users.bob.id)
  })

  it("sign-in options for bob's email don't sign alice in with alice's passkey", async () => {
    const res = (await signIn(h, h.users.bob.email, aliceKey)).res
    expect(res.status).toBe(401)
    expect(res.headers.get('set-cookie')).toBeNull()
  })

  it('one challenge, two concurrent sign-ins: exactly one session', async () => {
    const { options, challenge } = await authOptions(h, h.users.alice.email)
    const credential = aliceKey.assert({ challenge: options.challenge })
    const results = await Promise.all([authVerify(h, { credential, challenge }), authVerify(h, { credential, challenge })])
    expect(results.map((r) => r.status).sort()).toEqual([200, 400])
  })
})

describe('passkeys: credentials belong to one account', () => {
  it("bob can't register alice's credential (a response built with her key) → 400, her row untouched", async () => {
    const before = await aliceRow()
    const { options, challenge } = await registerOptions(h, h.users.bob)
    const res = await registerVerify(h, h.users.bob, { credential: aliceKey.register({ challenge: options.challenge }), challenge })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Passkey already registered', code: 'PASSKEY_EXISTS' })
    expect(await aliceRow()).toEqual(before)
  })

  it("a cloned authenticator (alice's key, an older counter) is refused after the original signed in", async () => {
    expect((await signIn(h, h.users.alice.email, aliceKey)).res.status).toBe(200)
    const res = (await signIn(h, h.users.alice.email, aliceKey, { counter: aliceKey.counter - 1 })).res
    expect(res.status).toBe(401)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect((await aliceRow()).counter).toBe(aliceKey.counter)
  })

  it('a stored counter above the authenticator\'s refuses the sign-in', async () => {
    await h.db.update(passkeys).set({ counter: aliceKey.counter + 100 }).where(eq(passkeys.id, aliceKey.id))
    const sessionsBefore = (await h.db.select().from(sessions).where(eq(sessions.userId, h.users.alice.id))).length
    const res = (await signIn(h, h.users.alice.email, aliceKey)).res
    expect(res.status).toBe(401)
    expect((await h.db.select().from(sessions).where(eq(sessions.userId, h.users.alice.id))).length).toBe(sessionsBefore)
    aliceKey.counter += 100
    expect((await signIn(h, h.users.alice.email, aliceKey)).res.status).toBe(200)
  })

  it("a passkey signs in its own owner: bob's session is bob", async () => {
    const { res } = await signIn(h, h.users.bob.email.toUpperCase(), bobKey)
    expect(res.status).toBe(200)
    expect((await sessionUser(h, sessionCookie(res)))?.id).toBe(h.users.bob.id)
  })
})

describe('passkeys: the database policy itself', () => {
  it("bob's transaction sees none of alice's passkeys, even without a where", async () => {
    const rows = await expectOwnRowsOnly(h.db, h.users.bob.id, passkeys)
    expect(rows.map((r) => r.id)).not.toContain(aliceKey.id)
  })

  it("bob can't insert a passkey owned by alice, nor change or delete hers", async () => {
    const forged = { id: 'forged-credential', userId: h.users.alice.id, publicKey: 'AAAA' }
    await expect(withUser(h.db, h.users.bob.id, (tx) => tx.insert(passkeys).values(forged))).rejects.toThrow()
    // app_user may not UPDATE passkeys at all (the counter is the service's, stamped at sign-in)
    await expect(
      withUser(h.db, h.users.bob.id, (tx) => tx.update(passkeys).set({ counter: 0 }).where(eq(passkeys.id, aliceKey.id)).returning()),
    ).rejects.toMatchObject({ cause: { code: '42501' } })
    const deleted = await withUser(h.db, h.users.bob.id, (tx) => tx.delete(passkeys).where(eq(passkeys.id, aliceKey.id)).returning())
    expect(deleted).toEqual([])
    expect(await aliceRow()).toBeDefined()
  })
})

describe('passkeys: requests from elsewhere', () => {
  const evil = { origin: 'http://evil.example' }

  it('a foreign Origin with a valid session → 403 on both register routes', async () => {
    for (const path of ['/api/passkey/register/options', '/api/passkey/register/verify']) {
      const res = await call(h, path, { user: h.users.alice, body: {}, headers: evil })
      expect(res.status, path).toBe(403)
      expect(await res.json()).toEqual(FORBIDDEN_ORIGIN)
    }
  })

  it('sign-in verify from a foreign Origin → 403 and no cookie (no login CSRF), the challenge left unused', async () => {
    const { options, challenge } = await authOptions(h, h.users.bob.email)
    const credential = bobKey.assert({ challenge: options.challenge })
    const res = await call(h, '/api/passkey/auth/verify', { body: { credential, challenge }, headers: evil })
    expect(res.status).toBe(403)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect((await authVerify(h, { credential, challenge })).status).toBe(200)
  })

  it('20 sign-in requests per minute per IP, options and verify together; then 429 with Retry-After', async () => {
    // Fixed windows are aligned to the epoch: start with enough of this one left to count to 21 in it.
    const left = 60_000 - (Date.now() % 60_000)
    if (left < 10_000) await new Promise((r) => setTimeout(r, left + 50))
    const ip = '203.0.113.99'
    for (let i = 0; i < 19; i++) expect((await call(h, '/api/passkey/auth/options', { body: { identifier: 'x@example.com' }, ip })).status).toBe(200)
    const verify = await call(h, '/api/passkey/auth/verify', { body: { credential: bobKey.assert({ challenge: 'AA' }), challenge: '0x00' }, ip })
    expect(verify.status).toBe(400)
    expect(verify.headers.get('ratelimit-remaining')).toBe('0')
    for (const path of ['/api/passkey/auth/options', '/api/passkey/auth/verify']) {
      const res = await call(h, path, { body: { identifier: 'x@example.com', credential: bobKey.assert({ challenge: 'AA' }), challenge: '0x00' }, ip })
      expect(res.status, path).toBe(429)
      expect(await res.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    }
    // Another address is unaffected.
    expect((await call(h, '/api/passkey/auth/options', { body: { identifier: 'x@example.com' }, ip: '203.0.113.100' })).status).toBe(200)
  })
})
