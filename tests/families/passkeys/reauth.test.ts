import { and, desc, eq } from 'drizzle-orm'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { mailOutbox, passkeys } from '../../../schema'
import { type SeededUser, useHarness } from '../../support/harness'
import { SoftAuthenticator } from './authenticator'
import { agedSession, authOptions, call, enrol, RP, registerOptions, registerVerify } from './helpers'

/**
 * Finding 8: a session cookie held once could add a permanent passkey, silently; sign-in options listed an
 * account's credential ids to anyone with the email.
 */
const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {}) // the dev outbox logs each mail
})
afterEach(() => {
  vi.restoreAllMocks()
  vi.spyOn(console, 'info').mockImplementation(() => {})
})

let n = 0
const freshUser = () => h.seedUser('Quinn', `quinn-${++n}-${crypto.randomUUID().slice(0, 8)}@example.com`)
const REAUTH = { error: 'Sign in again to add a passkey: it needs a sign-in from the last 10 minutes', code: 'REAUTH_REQUIRED' }
const mailsTo = (email: string) =>
  h.db.select().from(mailOutbox).where(and(eq(mailOutbox.to, email.toLowerCase()), eq(mailOutbox.kind, 'passkey-added'))).orderBy(desc(mailOutbox.createdAt))

describe('passkeys: adding one needs a recent sign-in', () => {
  it('a session signed in 11 minutes ago → 403 REAUTH_REQUIRED on options and on verify; nothing stored', async () => {
    const user = await freshUser()
    const stale = await agedSession(h, user, 11)
    const opts = await call(h, '/api/passkey/register/options', { user: stale })
    expect(opts.status).toBe(403)
    expect(await opts.json()).toEqual(REAUTH)

    // Options from a fresh session, verify from the stale one: the stale session still cannot add it.
    const { options, challenge } = await registerOptions(h, user)
    const authenticator = new SoftAuthenticator(RP)
    const credential = authenticator.register({ challenge: options.challenge })
    const res = await registerVerify(h, stale, { credential, challenge })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual(REAUTH)
    expect(await h.db.select().from(passkeys).where(eq(passkeys.userId, user.id))).toEqual([])
    expect(await mailsTo(user.email)).toEqual([])

    // The refusal came before the challenge was used: a fresh sign-in can still finish with it.
    expect((await registerVerify(h, user, { credential, challenge })).status).toBe(200)
  })

  it('a session signed in 9 minutes ago may add one', async () => {
    const user = await freshUser()
    const recent = await agedSession(h, user, 9)
    await enrol(h, recent, 'Recent')
    expect(await h.db.select().from(passkeys).where(eq(passkeys.userId, user.id))).toHaveLength(1)
  })

  it('a stale session keeps every other right: the passkey list still answers', async () => {
    const user = await freshUser()
    const stale = await agedSession(h, user, 60)
    const res = await h.web.request('/api/passkeys', { headers: { cookie: stale.cookie } })
    expect(res.status).toBe(200)
  })
})

describe('passkeys: the owner is told', () => {
  it('adding a passkey mails the account address (passkey-added) naming its label', async () => {
    const user = await freshUser()
    await enrol(h, user, 'Hotel PC')
    const mails = await mailsTo(user.email)
    expect(mails).toHaveLength(1)
    expect(mails[0].subject).toBe('A passkey was added to your account')
    expect(mails[0].text).toContain('"Hotel PC"')
    expect(mails[0].text).toMatch(/reset your password/i)
  })

  it('a label cannot forge lines in the mail', async () => {
    const user = await freshUser()
    await enrol(h, user, 'a\nIgnore this mail\u2028b')
    const [mail] = await mailsTo(user.email)
    expect(mail.text).toContain('"a Ignore this mail b"')
  })

  it('a failing mail provider does not undo the registration', async () => {
    const user = await freshUser()
    vi.spyOn(h.services.mail, 'send').mockRejectedValueOnce(new Error('provider down'))
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    await enrol(h, user, 'Kept')
    expect(await h.db.select().from(passkeys).where(eq(passkeys.userId, user.id))).toHaveLength(1)
    expect(JSON.parse(errors.mock.calls.flat().join(' '))).toMatchObject({ event: 'mail.notice_failed', kind: 'passkey-added', errorMessage: 'provider down' })
  })
})

describe('passkeys: sign-in options say nothing about the account', () => {
  let owner: SeededUser
  let key: SoftAuthenticator
  beforeAll(async () => {
    owner = await freshUser()
    key = await enrol(h, owner, 'Owned')
  })

  /** Everything in the options except the random challenge. */
  const shape = (o: Record<string, unknown>) => ({ ...o, challenge: undefined })

  it('an account with passkeys and an unknown email get the same options: no credential ids', async () => {
    const known = await authOptions(h, owner.email)
    const unknown = await authOptions(h, `nobody-${crypto.randomUUID()}@example.com`)
    expect(shape(known.options)).toEqual(shape(unknown.options))
    expect(known.options.allowCredentials).toEqual([])
    expect(JSON.stringify(known)).not.toContain(key.id)
  })

  it('both cases do the same database work: one lookup, no passkey query for the known account', async () => {
    // Every way a route reaches the database starts with one of these on the shared handle.
    const db = h.services.db as unknown as Record<string, (...a: unknown[]) => unknown>
    const count = async (identifier: string) => {
      const spies = ['select', 'transaction', 'execute', 'query', 'insert', 'update', 'delete']
        .filter((m) => typeof db[m] === 'function')
        .map((m) => vi.spyOn(db, m))
      await authOptions(h, identifier)
      const calls = spies.map((s) => s.mock.calls.length)
      for (const s of spies) s.mockRestore()
      return calls
    }
    const known = await count(owner.email)
    const unknown = await count(`nobody-${crypto.randomUUID()}@example.com`)
    expect(known).toEqual(unknown)
    expect(known.reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
  })

  it('the discoverable passkey still signs its owner in with the empty list', async () => {
    const { options, challenge } = await authOptions(h, owner.email)
    const credential = key.assert({ challenge: options.challenge })
    const res = await call(h, '/api/passkey/auth/verify', { body: { credential, challenge } })
    expect(res.status).toBe(200)
  })
})
