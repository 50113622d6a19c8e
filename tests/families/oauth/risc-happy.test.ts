import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { jwksCacheKey } from '../../../functions/oauth/oidc'
import { accounts, securityEvents, sessions } from '../../../schema'
import { type SeededUser, useFixture, useHarness } from '../../support/harness'
import { startOidcServer } from '../../support/oidc-server'
import { googleEnv, issSub, landing, OTHER_CLIENT_ID, postRisc, queueIdle, riscToken, signInWithGoogle } from './helpers'

const oidc = useFixture(() => startOidcServer())
const h = useHarness(() => ({ env: googleEnv(oidc) }))

let n = 0
/** A user with two live sessions and a linked Google account holding tokens. */
async function linkedUser() {
  const user = await h.seedUser(`R${++n}`, `risc-${n}-${crypto.randomUUID().slice(0, 6)}@example.com`)
  await h.seedUser(`R${n}b`, `other-${n}-${crypto.randomUUID().slice(0, 6)}@example.com`) // an unrelated user
  await h.db.insert(sessions).values({ tokenHash: crypto.randomUUID(), userId: user.id, expiresAt: new Date(Date.now() + 60_000) })
  const sub = `risc-sub-${n}`
  await h.db.insert(accounts).values({ userId: user.id, provider: 'google', providerAccountId: sub, email: user.email, accessToken: 'at', refreshToken: 'rt', expiresAt: new Date(Date.now() + 3600_000) })
  return { user, sub }
}

const sessionCount = async (u: SeededUser) => (await h.db.select().from(sessions).where(eq(sessions.userId, u.id))).length
const account = async (sub: string) => (await h.db.select().from(accounts).where(eq(accounts.providerAccountId, sub)))[0]
const eventRow = async (jti: string) => (await h.db.select().from(securityEvents).where(eq(securityEvents.jti, jti)))[0]
const jtiOf = (token: string) => JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).jti as string

/** POSTs, expects 202 with an empty body, waits for the queue to act. */
async function deliver(token: string, contentType?: string) {
  const res = await postRisc(h, token, contentType)
  expect(res.status, await res.clone().text()).toBe(202)
  expect(await res.text()).toBe('')
  await queueIdle(h)
  return eventRow(jtiOf(token))
}

describe('RISC: valid events are acknowledged and acted on through the queue', () => {
  it('JWKS fetched once across several events (cached 24 h in kv)', async () => {
    await h.services.kv.del(jwksCacheKey(`${oidc.url}/jwks`))
    const before = oidc.count('/jwks')
    for (let i = 0; i < 3; i++) await deliver(await riscToken(oidc, 'verification', undefined))
    expect(oidc.count('/jwks') - before).toBe(1)
  })

  it('sessions-revoked → every session of that user deleted (others untouched); the row records it', async () => {
    const { user, sub } = await linkedUser()
    const bystander = h.users.alice
    const aliceSessions = await sessionCount(bystander)
    expect(await sessionCount(user)).toBe(2)
    const token = await riscToken(oidc, 'sessions-revoked', issSub(oidc, sub))
    const row = await deliver(token)
    expect(await sessionCount(user)).toBe(0)
    expect(await sessionCount(bystander)).toBe(aliceSessions)
    expect(row).toMatchObject({
      issuer: oidc.url,
      eventTypes: ['https://schemas.openid.net/secevent/risc/event-type/sessions-revoked'],
      subject: sub,
      userId: user.id,
      outcome: 'sessions-revoked: 2 session(s) deleted',
    })
    expect(row.processedAt).toBeInstanceOf(Date)
    expect((row.payload as { jti: string }).jti).toBe(row.jti)
  })

  it('account-disabled (hijacking) → sessions deleted and sign-in disabled; Google sign-in is then refused', async () => {
    const { user, sub } = await linkedUser()
    const row = await deliver(await riscToken(oidc, 'account-disabled', issSub(oidc, sub), { reason: 'hijacking' }))
    expect(await sessionCount(user)).toBe(0)
    expect((await account(sub)).signInDisabled).toBe(true)
    expect(row.outcome).toBe('account-disabled (hijacking): 2 session(s) deleted, sign-in disabled on 1 account(s)')
    const { res } = await signInWithGoogle(h, oidc, { sub, email: user.email, email_verified: true })
    expect(landing(res)).toBe('error:AccountDisabled')
  })

  it('account-disabled (bulk-account) → sign-in disabled, sessions kept; account-enabled → enabled again', async () => {
    const { user, sub } = await linkedUser()
    await deliver(await riscToken(oidc, 'account-disabled', issSub(oidc, sub), { reason: 'bulk-account' }))
    expect(await sessionCount(user)).toBe(2)
    expect((await account(sub)).signInDisabled).toBe(true)
    const row = await deliver(await riscToken(oidc, 'account-enabled', issSub(oidc, sub)))
    expect((await account(sub)).signInDisabled).toBe(false)
    expect(row.outcome).toBe('account-enabled: sign-in enabled on 1 account(s)')
    const { res } = await signInWithGoogle(h, oidc, { sub, email: user.email, email_verified: true })
    expect(landing(res)).toBe('/dashboard')
  })

  it('tokens-revoked → the stored access and refresh tokens are dropped, nothing else', async () => {
    const { user, sub } = await linkedUser()
    const row = await deliver(await riscToken(oidc, 'tokens-revoked', issSub(oidc, sub)))
    expect(await account(sub)).toMatchObject({ accessToken: null, refreshToken: null, expiresAt: null, signInDisabled: false })
    expect(await sessionCount(user)).toBe(2)
    expect(row.outcome).toBe('tokens-revoked: tokens dropped on 1 account(s)')
  })

  it('an email subject matches the user by email', async () => {
    const { user, sub } = await linkedUser()
    const row = await deliver(await riscToken(oidc, 'sessions-revoked', { subject_type: 'email', email: user.email.toUpperCase() }))
    expect(await sessionCount(user)).toBe(0)
    expect(row).toMatchObject({ email: user.email, subject: null, userId: user.id })
    expect((await account(sub)).signInDisabled).toBe(false)
  })

  it('verification and credential-change-required change nothing; an unknown subject is recorded as unmatched', async () => {
    const { user, sub } = await linkedUser()
    expect((await deliver(await riscToken(oidc, 'verification', undefined))).outcome).toBe('verification: no action')
    const change = await deliver(await riscToken(oidc, 'account-credential-change-required', issSub(oidc, sub)))
    expect(change.outcome).toBe('account-credential-change-required: no action')
    const nobody = await deliver(await riscToken(oidc, 'sessions-revoked', issSub(oidc, 'no-such-sub')))
    expect(nobody).toMatchObject({ outcome: 'sessions-revoked: no matching user', userId: null })
    expect(await sessionCount(user)).toBe(2)
    expect(await account(sub)).toMatchObject({ accessToken: 'at', signInDisabled: false })
  })

  it('a repeated jti → 202 and no second effect', async () => {
    const { user, sub } = await linkedUser()
    const token = await riscToken(oidc, 'sessions-revoked', issSub(oidc, sub))
    const first = await deliver(token)
    await h.db.insert(sessions).values({ tokenHash: crypto.randomUUID(), userId: user.id, expiresAt: new Date(Date.now() + 60_000) })
    const again = await deliver(token)
    expect(await sessionCount(user)).toBe(1) // the session made after the first delivery survives
    expect(again).toEqual(first)
    expect(await h.db.select().from(securityEvents).where(eq(securityEvents.jti, first.jti))).toHaveLength(1)
  })

  it("Google's own form is accepted: no exp, issuer with a trailing slash, text/plain, a further client id as audience", async () => {
    const { sub } = await linkedUser()
    const token = await riscToken(oidc, 'tokens-revoked', issSub(oidc, sub), {
      claims: { exp: undefined, nbf: undefined, iss: `${oidc.url}/`, aud: OTHER_CLIENT_ID },
    })
    const row = await deliver(token, 'text/plain')
    expect(row.outcome).toBe('tokens-revoked: tokens dropped on 1 account(s)')
  })

  it('GET /api/security/risc → {status: ok}', async () => {
    const res = await h.web.request('/api/security/risc')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ok' })
  })
})
