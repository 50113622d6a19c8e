import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { hashSessionToken, newSessionToken, SESSION_COOKIE } from '../../../lib/auth/session'
import { permissionHub } from '../../../functions/permissions/hub'
import { accounts, sessions } from '../../../schema'
import { PASSWORD, type SeededUser, useFixture } from '../../support/harness'
import { startOidcServer } from '../../support/oidc-server'
import { call } from '../../support/requests'
import { lastVerificationToken, resendVerification, verifyEmail } from '../auth/flow'
import { googleEnv, issSub, postRisc, queueIdle, riscToken } from '../oauth/helpers'
import { requestReset, reset } from '../users/helpers'
import { dangerousCall, type Dashboard, type Message, listen, openDashboard, permissionsHarness, quietFor, storedRequest } from './helpers'

/**
 * Finding 5: a socket opened with a session kept receiving every dangerous call (with its input) after that
 * session was revoked, and its `approve` still approved. Now a socket is bound to its session: when the session
 * ends, by any path, the socket hears nothing more and is closed (4401 `Session ended`); a decision is applied
 * only while its session is live.
 */
let server: Awaited<ReturnType<typeof listen>>
const open: Dashboard[] = []
const oidc = useFixture(() => startOidcServer())
const h = useFixture(() => permissionsHarness(googleEnv(oidc)))
beforeAll(async () => {
  server = await listen(h)
  vi.spyOn(console, 'info').mockImplementation(() => {}) // the dev outbox logs each mail
})
afterAll(async () => {
  await Promise.all(open.map((d) => d.close()))
  await server?.close()
})
afterEach(() => vi.useRealTimers())

let n = 0
const victim = (opts: { verified?: boolean } = {}) => h.seedUser(`V${++n}`, `victim-${n}-${crypto.randomUUID().slice(0, 6)}@example.com`, opts)

/** Another live session of `user` (a second browser, or a thief's copy of a cookie), as that user would present it. */
async function anotherSession(user: SeededUser, expiresAt = new Date(Date.now() + 24 * 3600_000)): Promise<SeededUser> {
  const token = newSessionToken()
  await h.db.insert(sessions).values({ tokenHash: await hashSessionToken(token), userId: user.id, expiresAt })
  return { ...user, token, cookie: `${SESSION_COOKIE}=${token}` }
}

const dashboard = async (as: SeededUser) => {
  const d = await openDashboard(server.url, as)
  open.push(d)
  return d
}

const isRequest = (id: string) => (m: Message) => m.type === 'permission_request' && m.requestId === id
const isDecided = (id: string) => (m: Message) => m.type === 'permission_decided' && m.requestId === id
const ENDED = { code: 4401, reason: 'Session ended' }

/** The socket was closed for its session, and a dangerous call made after that never reaches it. */
async function endedFor(d: Dashboard, userId: string) {
  expect(await d.closed).toEqual(ENDED)
  const later = await dangerousCall(h, userId)
  await quietFor()
  expect(d.received.some((m) => m.requestId === later)).toBe(false)
  return later
}

describe('permission socket: a session that ends closes its socket', () => {
  it('a stolen session approves while live; after the victim changes the password elsewhere it hears nothing, is closed, and cannot approve', async () => {
    const owner = await victim()
    const thief = await anotherSession(owner)
    const [stolen, own] = [await dashboard(thief), await dashboard(owner)]

    // Before: the stolen session's socket receives the call with its input, and its approval is applied.
    const before = await dangerousCall(h, owner.id)
    expect(await stolen.next(isRequest(before))).toMatchObject({ toolName: 'frobnicate', toolInput: { level: 11 } })
    stolen.send({ type: 'decision', requestId: before, decision: 'approve' })
    expect(await stolen.next(isDecided(before))).toMatchObject({ status: 'approved' })

    const changed = await call(h, 'POST', '/api/user/password', { user: owner, body: { currentPassword: PASSWORD, newPassword: 'an entirely new passphrase' } })
    expect(changed.status).toBe(200)
    const later = await endedFor(stolen, owner.id)
    // The session that changed the password keeps its socket, and decides.
    await own.next(isRequest(later))
    own.send({ type: 'decision', requestId: later, decision: 'deny' })
    expect(await own.next(isDecided(later))).toMatchObject({ status: 'denied' })
  })

  it('a decision sent on a socket whose session is gone (no notice reached this process) is refused, the socket closed, the request left pending', async () => {
    const owner = await victim()
    const thief = await anotherSession(owner)
    const stolen = await dashboard(thief)
    const requestId = await dangerousCall(h, owner.id)
    await stolen.next(isRequest(requestId))
    // Revoked behind the hub's back (another server process, a lost notice).
    await h.db.delete(sessions).where(eq(sessions.tokenHash, await hashSessionToken(thief.token)))
    stolen.send({ type: 'decision', requestId, decision: 'approve' })
    expect(await stolen.next((m) => m.type === 'error')).toEqual({ type: 'error', requestId, error: 'Session ended: sign in again', code: 'UNAUTHORIZED' })
    expect(await stolen.closed).toEqual(ENDED)
    expect((await storedRequest(h, requestId)).status).toBe('pending')
  })

  it('sign-out closes the socket that session opened; another session of the same user keeps its own', async () => {
    const owner = await victim()
    const laptop = await anotherSession(owner)
    const [signingOut, staying] = [await dashboard(laptop), await dashboard(owner)]
    expect((await call(h, 'POST', '/api/auth/signout', { user: laptop })).status).toBe(200)
    const later = await endedFor(signingOut, owner.id)
    await staying.next(isRequest(later))
  })

  it('a password reset closes every socket of the account', async () => {
    const owner = await victim()
    const thief = await anotherSession(owner)
    const sockets = [await dashboard(owner), await dashboard(thief)]
    const token = await requestReset(h, owner.email)
    expect((await reset(h, token, 'the owner is back in control')).status).toBe(200)
    for (const d of sockets) expect(await d.closed).toEqual(ENDED)
    expect(permissionHub(h.services).count(owner.id)).toBe(0)
  })

  it('a RISC sessions-revoked event closes every socket of the Google-linked user', async () => {
    const owner = await victim()
    const sub = `perm-risc-${n}`
    await h.db.insert(accounts).values({ userId: owner.id, provider: 'google', providerAccountId: sub, email: owner.email })
    const d = await dashboard(owner)
    expect((await postRisc(h, await riscToken(oidc, 'sessions-revoked', issSub(oidc, sub)))).status).toBe(202)
    await queueIdle(h)
    await endedFor(d, owner.id)
  })

  it('the verification link used by the mailbox owner closes the squatter’s socket', async () => {
    const squatter = await victim({ verified: false })
    const d = await dashboard(squatter)
    expect((await resendVerification(h, squatter.cookie)).status).toBe(200)
    const token = await lastVerificationToken(h, squatter.email) // read in the real owner's mailbox
    expect((await verifyEmail(h, token)).status).toBe(200)
    await endedFor(d, squatter.id)
  })

  it('the periodic check closes a socket whose session was deleted without a notice', async () => {
    const owner = await victim()
    const other = await anotherSession(owner)
    const [gone, kept] = [await dashboard(other), await dashboard(owner)]
    await h.db.delete(sessions).where(eq(sessions.tokenHash, await hashSessionToken(other.token)))
    expect(await permissionHub(h.services).recheckSessions()).toBe(1)
    expect(await gone.closed).toEqual(ENDED)
    expect(kept.ws.readyState).toBe(1)
  })

  it('a socket whose session has expired receives no push and is closed', async () => {
    const owner = await victim()
    const expiresAt = new Date(Date.now() + 60_000)
    const short = await anotherSession(owner, expiresAt)
    const [expiring, own] = [await dashboard(short), await dashboard(owner)]
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(expiresAt.getTime() + 1000)
    const requestId = await dangerousCall(h, owner.id)
    await own.next(isRequest(requestId))
    expect(await expiring.closed).toEqual(ENDED)
    expect(expiring.received.some((m) => m.requestId === requestId)).toBe(false)
  })
})
