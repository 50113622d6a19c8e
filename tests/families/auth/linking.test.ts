import { eq } from 'drizzle-orm'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { createPlatformApp, createRouter } from '../../../lib/app'
import { signInWithIdentity, type ProviderIdentity } from '../../../lib/auth/sign-in'
import { accounts, apiKeys, emailVerifications, passkeys, passwordResets, sessions, users } from '../../../schema'
import { insertApiKey } from '../../auth/helpers'
import { PASSWORD, useFixture, useHarness } from '../../support/harness'
import { startOidcServer } from '../../support/oidc-server'
import { googleEnv, landing, signInWithGoogle, cookieFrom } from '../oauth/helpers'
import { signInBase, walletEmail } from '../wallet-auth/flow'
import { login, register, sessionCookie } from './flow'

/** Finding 2: account pre-hijacking and provider identity confusion (lib/auth/sign-in.ts rules). */
let probe: ReturnType<typeof createPlatformApp>
const oidc = useFixture(() => startOidcServer())
// EOA signatures are recovered offline: no chain is needed (the RPC address is a closed port).
const h = useHarness(() => ({ env: googleEnv(oidc, { BASE_RPC_URL: 'http://127.0.0.1:9' }) }))
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {})
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  const r = createRouter()
  r.post('/probe/sign-in', async (c) => c.json({ id: (await signInWithIdentity(c, (await c.req.json()) as ProviderIdentity)).user.id }))
  probe = createPlatformApp(() => h.services).route('/', r)
})

const validateKey = (key: string) =>
  h.backend.request('/api/validate-key', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'cf-connecting-ip': '198.18.7.7' } })
const me = async (cookie: string) => (await h.web.request('/api/auth/session', { headers: { cookie } })).json()
const userRow = async (id: string) => (await h.db.select().from(users).where(eq(users.id, id)))[0]
const rowsOf = async (id: string) => ({
  sessions: await h.db.select().from(sessions).where(eq(sessions.userId, id)),
  apiKeys: await h.db.select().from(apiKeys).where(eq(apiKeys.userId, id)),
  passkeys: await h.db.select().from(passkeys).where(eq(passkeys.userId, id)),
  links: await h.db.select().from(accounts).where(eq(accounts.userId, id)),
  verifications: await h.db.select().from(emailVerifications).where(eq(emailVerifications.userId, id)),
  resets: await h.db.select().from(passwordResets).where(eq(passwordResets.userId, id)),
})

/** What an attacker leaves in an account it set up with someone else's address: a session, a key, a passkey, a link, tokens. */
async function plantAttacker(id: string) {
  const key = (await insertApiKey(h.db, id)).key
  await h.db.insert(passkeys).values({ id: `cred-${id}`, userId: id, publicKey: 'attacker-public-key' })
  await h.db.insert(accounts).values({ userId: id, provider: 'google', providerAccountId: `attacker-google-${id}`, email: 'attacker@example.com' })
  await h.db.insert(passwordResets).values({ tokenHash: `reset-${id}`, userId: id, expiresAt: new Date(Date.now() + 3_600_000) })
  expect((await validateKey(key)).status).toBe(200)
  return key
}

async function expectTakenOver(id: string, email: string, attackerCookie: string, attackerKey: string) {
  const row = await userRow(id)
  expect(row.passwordHash).toBeNull()
  expect(row.emailVerifiedAt).toBeInstanceOf(Date)
  // The attacker's password, session and API key are dead.
  expect((await login(h, email, PASSWORD, '203.0.113.200')).status).toBe(401)
  expect((await me(attackerCookie)).user).toBeNull()
  expect((await validateKey(attackerKey)).status).toBe(401)
  const left = await rowsOf(id)
  expect(left.apiKeys).toEqual([])
  expect(left.passkeys).toEqual([])
  expect(left.resets.filter((r) => !r.usedAt)).toEqual([])
  expect(left.verifications.filter((v) => !v.usedAt)).toEqual([])
  expect(left.links.map((l) => l.providerAccountId).filter((s) => s.startsWith('attacker-google'))).toEqual([])
  expect(left.sessions).toHaveLength(1) // the owner's new one
}

describe('account linking', () => {
  it('SIWE pre-hijack: the wallet owner gets the account; the attacker password, session and key are dead', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const email = walletEmail(wallet.address)
    // Such a sign-up is now refused...
    expect((await register(h, { email, password: 'password123' }, '198.51.100.200')).status).toBe(400)
    // ...but one made before the fix is a plain unverified password account.
    const attacker = await h.seedUser('Mallory', email, { verified: false })
    const attackerKey = await plantAttacker(attacker.id)
    expect((await me(attacker.cookie)).user.id).toBe(attacker.id)

    const { res } = await signInBase(h, wallet)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.user.id).toBe(attacker.id) // the owner is in the (cleared) account, not a duplicate
    expect((await me(sessionCookie(res))).user.id).toBe(attacker.id)
    await expectTakenOver(attacker.id, email, attacker.cookie, attackerKey)
    expect((await userRow(attacker.id)).name).toBe(wallet.address)
    expect((await rowsOf(attacker.id)).links.map((l) => [l.provider, l.providerAccountId])).toEqual([['wallet', wallet.address.toLowerCase()]])
  })

  it('Google pre-hijack of an unverified password sign-up: the Google owner gets it, cleared', async () => {
    const reg = await register(h, { email: 'victim@example.com', password: PASSWORD }, '198.51.100.201')
    const attackerId = (await reg.json()).id
    const attackerCookie = sessionCookie(await login(h, 'victim@example.com', PASSWORD, '203.0.113.201'))
    const attackerKey = await plantAttacker(attackerId)
    const { res } = await signInWithGoogle(h, oidc, { sub: 'victim-sub', email: 'victim@example.com', email_verified: true, name: 'Victim' })
    expect(landing(res)).toBe('/dashboard')
    const cookie = cookieFrom(res, 'service-session')!
    expect((await me(cookie)).user).toMatchObject({ id: attackerId, name: 'Victim' })
    await expectTakenOver(attackerId, 'victim@example.com', attackerCookie, attackerKey)
  })

  it('a Google sub linked to alice, arriving with bob\'s email, signs in alice (never bob)', async () => {
    const { alice, bob } = h.users
    await h.db.insert(accounts).values({ userId: alice.id, provider: 'google', providerAccountId: 'sub-of-alice', email: alice.email })
    const { res } = await signInWithGoogle(h, oidc, { sub: 'sub-of-alice', email: bob.email, email_verified: true, name: 'Bob?' })
    expect(landing(res)).toBe('/dashboard')
    expect((await me(cookieFrom(res, 'service-session')!)).user.id).toBe(alice.id)
    // Neither account changed hands: bob keeps his password, alice hers.
    expect((await userRow(bob.id)).passwordHash).not.toBeNull()
    expect((await userRow(alice.id)).email).toBe(alice.email.toLowerCase())
  })

  it('a verified account is linked and keeps its password and keys', async () => {
    const carol = await h.seedUser('Carol', 'carol-link@example.com')
    const key = (await insertApiKey(h.db, carol.id)).key
    const { res } = await signInWithGoogle(h, oidc, { sub: 'carol-sub', email: 'carol-link@example.com', email_verified: true })
    expect((await me(cookieFrom(res, 'service-session')!)).user.id).toBe(carol.id)
    expect((await login(h, 'carol-link@example.com', PASSWORD, '203.0.113.202')).status).toBe(200)
    expect((await validateKey(key)).status).toBe(200)
    expect((await me(carol.cookie)).user.id).toBe(carol.id) // her other session lives on
  })

  it('a provider that does not vouch for the email never links to an existing account: 409 ACCOUNT_LINK_REFUSED', async () => {
    const { bob } = h.users
    const identity = { provider: 'google', subject: 'unvouched-sub', email: bob.email, emailVerified: false, name: 'X' }
    const res = await probe.request('/probe/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(identity) })
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual({ error: 'An account with this email already exists: sign in to it another way', code: 'ACCOUNT_LINK_REFUSED' })
    expect(res.headers.get('set-cookie')).toBeNull()
    expect(await h.db.select().from(accounts).where(eq(accounts.providerAccountId, 'unvouched-sub'))).toEqual([])
  })

  it('an unverified wallet account made by wallet sign-in before verification was recorded is just marked verified', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const [legacy] = await h.db.insert(users).values({ email: walletEmail(wallet.address), name: 'Legacy' }).returning()
    const key = (await insertApiKey(h.db, legacy.id)).key
    const { res } = await signInBase(h, wallet)
    expect((await res.json()).user).toEqual({ id: legacy.id, name: 'Legacy' })
    expect((await userRow(legacy.id)).emailVerifiedAt).toBeInstanceOf(Date)
    expect((await validateKey(key)).status).toBe(200)
  })

  it('a new wallet user is created verified and linked by (provider, subject)', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const { res } = await signInBase(h, wallet)
    const id = (await res.json()).user.id
    expect((await userRow(id)).emailVerifiedAt).toBeInstanceOf(Date)
    expect((await rowsOf(id)).links.map((l) => [l.provider, l.providerAccountId])).toEqual([['wallet', wallet.address.toLowerCase()]])
  })
})
