import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { apiKeys, passkeys, sessions, users } from '../../../schema'
import { PASSWORD, type SeededUser, useHarness } from '../../support/harness'
import { backendCall, call } from '../../support/requests'
import { createKey, validate } from '../keys/helpers'
import { enrol, signIn } from '../passkeys/helpers'
import { lastMail, requestReset, reset } from '../users/helpers'
import { lastVerificationToken, login, resendVerification, sessionCookie, verifyEmail } from './flow'

/**
 * Finding 13 (pre-account hijacking): a squatter registers the victim's unverified address and makes an API key;
 * the victim proves the mailbox and resets the password; the squatter's session ends but the key lived on. Now the
 * proof (the link, a reset) ends whatever the password holder made before it; only what the proven owner makes lasts.
 */
const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {}) // the dev outbox logs each mail
})

let n = 0
const squatted = () => h.seedUser(`S${++n}`, `owner-${n}-${crypto.randomUUID().slice(0, 6)}@example.com`, { verified: false })

const NEW_PASSWORD = 'the mailbox owner’s own passphrase'
const me = (cookie: string) => h.web.request('/api/user', { headers: { cookie } })
const backendValidate = (key: string) => backendCall(h.backend, 'POST', '/api/validate-key', { headers: { authorization: `Bearer ${key}` } })
const keysOf = (id: string) => h.db.select().from(apiKeys).where(eq(apiKeys.userId, id))
const passkeysOf = (id: string) => h.db.select().from(passkeys).where(eq(passkeys.userId, id))

/** What the squatter made while the address was unverified: a session (the seeded one), a key, a passkey. */
async function squat() {
  const squatter = await squatted()
  const key = await createKey(h, squatter, 'planted')
  const passkey = await enrol(h, squatter, 'Squatter key')
  expect((await validate(h, key.key)).status).toBe(200)
  expect((await backendValidate(key.key)).status).toBe(200)
  return { squatter, key, passkey }
}

/** The link the address's real owner finds in the mailbox. */
async function verificationLink(user: SeededUser) {
  expect((await resendVerification(h, user.cookie)).status).toBe(200)
  return lastVerificationToken(h, user.email)
}

/** Everything the squatter made is refused: the session, the key (web and backend), the passkey. */
async function squatterLocked({ squatter, key, passkey }: Awaited<ReturnType<typeof squat>>) {
  expect((await me(squatter.cookie)).status).toBe(401)
  expect((await validate(h, key.key)).status).toBe(401)
  const backend = await backendValidate(key.key)
  expect(backend.status).toBe(401)
  expect(await backend.json()).toEqual({ error: 'Invalid API key', code: 'INVALID_API_KEY' })
  expect((await signIn(h, squatter.email, passkey)).res.status).toBe(401)
  expect((await keysOf(squatter.id)).map((k) => k.id)).not.toContain(key.id)
  expect(await passkeysOf(squatter.id)).toEqual([])
}

/** The proven owner resets the password, signs in, and makes a key: it works on the web and the backend. */
async function ownerTakesOver(user: SeededUser) {
  expect((await reset(h, await requestReset(h, user.email), NEW_PASSWORD)).status).toBe(200)
  const signedIn = await login(h, user.email, NEW_PASSWORD, '203.0.113.140')
  expect(signedIn.status).toBe(200)
  const owner = { ...user, cookie: sessionCookie(signedIn) }
  const key = await createKey(h, owner, 'mine')
  expect((await validate(h, key.key)).status).toBe(200)
  expect((await backendValidate(key.key)).status).toBe(200)
  return owner
}

describe('the verification link: the mailbox owner’s proof', () => {
  it('opened by the owner elsewhere: the squatter’s session, key (web and backend), passkey and password end; the owner’s later key works', async () => {
    const planted = await squat()
    const token = await verificationLink(planted.squatter)
    expect((await verifyEmail(h, token)).status).toBe(200)
    await squatterLocked(planted)
    // The password set at sign-up was the squatter's too: it no longer signs in, so nothing new can be made with it.
    expect((await login(h, planted.squatter.email, PASSWORD, '203.0.113.141')).status).toBe(401)
    const owner = await ownerTakesOver(planted.squatter)
    expect((await me(owner.cookie)).status).toBe(200)
  })

  it('opened in the browser that signed up (its session): that session and the password stay; other sessions, keys and passkeys made before end; a later key works', async () => {
    const { squatter: user, key, passkey } = await squat()
    const [other] = await h.db.insert(sessions).values({ tokenHash: crypto.randomUUID(), userId: user.id, expiresAt: new Date(Date.now() + 3600_000) }).returning()
    const token = await verificationLink(user)
    expect((await verifyEmail(h, token, undefined, user.cookie)).status).toBe(200)
    expect(await (await me(user.cookie)).json()).toMatchObject({ emailVerified: true })
    expect(await h.db.select().from(sessions).where(eq(sessions.tokenHash, other.tokenHash))).toEqual([])
    expect((await validate(h, key.key)).status).toBe(401)
    expect((await backendValidate(key.key)).status).toBe(401)
    expect((await signIn(h, user.email, passkey)).res.status).toBe(401)
    expect((await login(h, user.email, PASSWORD, '203.0.113.142')).status).toBe(200)
    const later = await createKey(h, user, 'after the proof')
    expect((await validate(h, later.key)).status).toBe(200)
    expect((await backendValidate(later.key)).status).toBe(200)
  })

  it('a session of another account in the browser keeps nothing of this one; that other session is untouched', async () => {
    const planted = await squat()
    const token = await verificationLink(planted.squatter)
    expect((await verifyEmail(h, token, undefined, h.users.bob.cookie)).status).toBe(200)
    await squatterLocked(planted)
    expect((await me(h.users.bob.cookie)).status).toBe(200)
  })
})

describe('a password reset: the mailbox owner’s proof', () => {
  it('on the unverified address: the squatter’s session, key (web and backend) and passkey end', async () => {
    const planted = await squat()
    await ownerTakesOver(planted.squatter)
    await squatterLocked(planted)
  })

  it('the finding’s order, link then reset: nothing of the squatter survives, and the owner keeps what they make', async () => {
    const planted = await squat()
    expect((await verifyEmail(h, await verificationLink(planted.squatter))).status).toBe(200)
    const owner = await ownerTakesOver(planted.squatter)
    await squatterLocked(planted)
    expect(await keysOf(owner.id)).toHaveLength(1)
  })

  it('a key made before the address was first proven (an older verification that removed nothing) is revoked by a reset; one made after is kept', async () => {
    const user = await squatted()
    const before = await createKey(h, user, 'made unverified')
    // Verified a second after the key was made (as before this rule: the key stayed).
    await h.db.update(users).set({ emailVerifiedAt: new Date(Date.now() + 1000) }).where(eq(users.id, user.id))
    const after = await createKey(h, user, 'made verified')
    await h.db.update(apiKeys).set({ createdAt: new Date(Date.now() + 2000) }).where(eq(apiKeys.id, after.id))
    expect((await reset(h, await requestReset(h, user.email), NEW_PASSWORD)).status).toBe(200)
    expect((await validate(h, before.key)).status).toBe(401)
    expect((await backendValidate(before.key)).status).toBe(401)
    expect((await validate(h, after.key)).status).toBe(200)
    const mail = await lastMail(h, user.email, 'password-reset-done')
    expect(mail.text).toContain('These API keys were made before your email address was verified, so they were revoked')
    expect(mail.text).toContain(`- made unverified (${before.prefix}...`)
    expect(mail.text).toContain('Your API keys still work')
    expect(mail.text).toContain(`- made verified (${after.prefix}...`)
  })

  it('a reset voids the verification links still unused: an old link proves nothing afterwards', async () => {
    const user = await squatted()
    const token = await verificationLink(user)
    expect((await reset(h, await requestReset(h, user.email), NEW_PASSWORD)).status).toBe(200)
    const owner = { ...user, cookie: sessionCookie(await login(h, user.email, NEW_PASSWORD, '203.0.113.143')) }
    expect((await verifyEmail(h, token)).status).toBe(400)
    expect((await call(h, 'GET', '/api/user', { user: owner })).status).toBe(200)
  })
})
