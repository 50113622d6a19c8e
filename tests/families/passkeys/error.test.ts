import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { passkeys } from '../../../schema'
import { type SeededUser, useHarness } from '../../support/harness'
import { SoftAuthenticator } from './authenticator'
import { authOptions, authVerify, call, enrol, RP, registerOptions, registerVerify, signIn, unknownChallenge } from './helpers'

// A short challenge lifetime so expiry is observable; every other case uses its challenge within milliseconds.
const TTL_MS = 2000
let user: SeededUser
let authenticator: SoftAuthenticator
const h = useHarness({ env: { PASSKEY_CHALLENGE_TTL_MS: String(TTL_MS) } })
beforeAll(async () => {
  user = await h.seedUser('Errors', `errors-${crypto.randomUUID()}@example.com`)
  authenticator = await enrol(h, user, 'Key')
})

const expectError = async (res: Response, status: number, error: string, code?: string) => {
  const body = (await res.json()) as { error: string; code?: string }
  expect(res.status, JSON.stringify(body)).toBe(status)
  expect(body.error).toBe(error)
  if (code) expect(body.code).toBe(code)
}
const noPasskeyStored = async (id: string) => expect(await h.db.select().from(passkeys).where(eq(passkeys.id, id))).toEqual([])

// Both register routes without a session, with a forged one, and with an empty body:
// tests/families/common-route-checks.test.ts.
describe('passkeys: request validation', () => {
  const credential = () => authenticator.assert({ challenge: 'x' })

  it('register verify: missing credential or challenge → 400 VALIDATION with the message', async () => {
    await expectError(await registerVerify(h, user, { challenge: unknownChallenge() }), 400, 'Credential is required', 'VALIDATION')
    await expectError(await registerVerify(h, user, { credential: credential() }), 400, 'Challenge is required', 'VALIDATION')
    await expectError(await registerVerify(h, user, { credential: credential(), challenge: '' }), 400, 'Challenge is required', 'VALIDATION')
    await expectError(await registerVerify(h, user, { credential: 'abc', challenge: unknownChallenge() }), 400, 'Credential must be an object')
    await expectError(await registerVerify(h, user, { credential: { id: 'x' }, challenge: unknownChallenge() }), 400, 'Invalid credential')
    await expectError(await registerVerify(h, user, { credential: credential(), challenge: 42 }), 400, 'Challenge must be a string')
  })

  it('register verify: a label over 64 characters or not a string → 400', async () => {
    const body = { credential: credential(), challenge: unknownChallenge() }
    await expectError(await registerVerify(h, user, { ...body, label: 'x'.repeat(65) }), 400, 'Label must be at most 64 characters')
    await expectError(await registerVerify(h, user, { ...body, label: 7 }), 400, 'Label must be a string')
  })

  it('a body that is not a JSON object, or not JSON → 400', async () => {
    await expectError(await call(h, '/api/passkey/register/verify', { user, body: '[]' }), 400, 'Request body must be a JSON object')
    await expectError(await call(h, '/api/passkey/auth/verify', { body: '{"credential":' }), 400, 'Invalid JSON body')
  })

  it('auth options: missing, empty or non-string identifier → 400', async () => {
    await expectError(await call(h, '/api/passkey/auth/options', { body: {} }), 400, 'Identifier is required', 'VALIDATION')
    await expectError(await call(h, '/api/passkey/auth/options', { body: { identifier: '   ' } }), 400, 'Identifier is required')
    await expectError(await call(h, '/api/passkey/auth/options', { body: { identifier: 5 } }), 400, 'Identifier must be a string')
  })

  it('auth verify: missing credential or challenge → 400', async () => {
    await expectError(await authVerify(h, { challenge: unknownChallenge() }), 400, 'Credential is required', 'VALIDATION')
    await expectError(await authVerify(h, { credential: credential() }), 400, 'Challenge is required', 'VALIDATION')
  })
})

describe('passkeys: challenges', () => {
  it('an unknown or malformed challenge → 400 CHALLENGE_INVALID on both verify routes', async () => {
    const fresh = new SoftAuthenticator(RP)
    for (const challenge of [unknownChallenge(), 'abc', `0x${'g'.repeat(64)}`, unknownChallenge().slice(2)]) {
      const reg = await registerVerify(h, user, { credential: fresh.register({ challenge: 'AAAA' }), challenge })
      await expectError(reg, 400, 'Invalid or expired challenge', 'CHALLENGE_INVALID')
      const auth = await authVerify(h, { credential: authenticator.assert({ challenge: 'AAAA' }), challenge })
      await expectError(auth, 400, 'Invalid or expired challenge', 'CHALLENGE_INVALID')
    }
    await noPasskeyStored(fresh.id)
  })

  it('an expired challenge → 400 on both verify routes (PASSKEY_CHALLENGE_TTL_MS)', async () => {
    const fresh = new SoftAuthenticator(RP)
    const reg = await registerOptions(h, user)
    const auth = await authOptions(h, user.email)
    await new Promise((r) => setTimeout(r, TTL_MS + 300))
    const regRes = await registerVerify(h, user, { credential: fresh.register({ challenge: reg.options.challenge }), challenge: reg.challenge })
    await expectError(regRes, 400, 'Invalid or expired challenge', 'CHALLENGE_INVALID')
    const authRes = await authVerify(h, { credential: authenticator.assert({ challenge: auth.options.challenge }), challenge: auth.challenge })
    await expectError(authRes, 400, 'Invalid or expired challenge', 'CHALLENGE_INVALID')
    await noPasskeyStored(fresh.id)
  })

  it('a used challenge → 400 the second time (registration and sign-in)', async () => {
    const fresh = new SoftAuthenticator(RP)
    const { options, challenge } = await registerOptions(h, user)
    const credential = fresh.register({ challenge: options.challenge })
    expect((await registerVerify(h, user, { credential, challenge })).status).toBe(200)
    await expectError(await registerVerify(h, user, { credential, challenge }), 400, 'Invalid or expired challenge', 'CHALLENGE_INVALID')

    const signed = await signIn(h, user.email, authenticator)
    expect(signed.res.status).toBe(200)
    const replay = await authVerify(h, { credential: signed.credential, challenge: signed.challenge })
    await expectError(replay, 400, 'Invalid or expired challenge', 'CHALLENGE_INVALID')
    expect(replay.headers.get('set-cookie')).toBeNull()
  })

  it('a failed verification still uses the challenge up', async () => {
    const { options, challenge } = await registerOptions(h, user)
    const fresh = new SoftAuthenticator(RP)
    const bad = await registerVerify(h, user, { credential: fresh.register({ challenge: options.challenge, origin: 'http://evil.example' }), challenge })
    expect(bad.status).toBe(400)
    const retry = await registerVerify(h, user, { credential: fresh.register({ challenge: options.challenge }), challenge })
    await expectError(retry, 400, 'Invalid or expired challenge')
  })

  it('a credential that signed another challenge than the one sent → 400 CHALLENGE_MISMATCH', async () => {
    const fresh = new SoftAuthenticator(RP)
    const a = await registerOptions(h, user)
    const b = await registerOptions(h, user)
    const reg = await registerVerify(h, user, { credential: fresh.register({ challenge: a.options.challenge }), challenge: b.challenge })
    await expectError(reg, 400, 'Challenge does not match the credential', 'CHALLENGE_MISMATCH')
    await noPasskeyStored(fresh.id)

    const x = await authOptions(h, user.email)
    const y = await authOptions(h, user.email)
    const auth = await authVerify(h, { credential: authenticator.assert({ challenge: x.options.challenge }), challenge: y.challenge })
    await expectError(auth, 400, 'Challenge does not match the credential', 'CHALLENGE_MISMATCH')
  })

  it("a challenge only serves its own ceremony: registration's for sign-in and back → 400", async () => {
    const reg = await registerOptions(h, user)
    const auth = await authOptions(h, user.email)
    const a = await authVerify(h, { credential: authenticator.assert({ challenge: reg.options.challenge }), challenge: reg.challenge })
    await expectError(a, 400, 'Invalid or expired challenge')
    const fresh = new SoftAuthenticator(RP)
    const r = await registerVerify(h, user, { credential: fresh.register({ challenge: auth.options.challenge }), challenge: auth.challenge })
    await expectError(r, 400, 'Invalid or expired challenge')
    await noPasskeyStored(fresh.id)
  })
})

describe('passkeys: registration verification', () => {
  const attempt = async (ceremony: { origin?: string; rpId?: string; userVerified?: boolean }) => {
    const fresh = new SoftAuthenticator(RP)
    const { options, challenge } = await registerOptions(h, user)
    const res = await registerVerify(h, user, { credential: fresh.register({ challenge: options.challenge, ...ceremony }), challenge })
    await expectError(res, 400, 'Passkey verification failed', 'PASSKEY_VERIFICATION_FAILED')
    await noPasskeyStored(fresh.id)
  }

  it('another origin → 400', () => attempt({ origin: 'http://localhost:4000' }))
  it('another relying party → 400', () => attempt({ rpId: 'example.com' }))
  it('user not verified → 400', () => attempt({ userVerified: false }))

  it('garbage in the response → 400, not 500', async () => {
    const { challenge } = await registerOptions(h, user)
    const res = await registerVerify(h, user, { credential: { id: 'abc', rawId: 'abc', type: 'public-key', response: { clientDataJSON: '!!', attestationObject: 'AA' } }, challenge })
    await expectError(res, 400, 'Passkey verification failed')
  })

  it('the same credential registered again (over a fresh challenge) → 400 Passkey already registered', async () => {
    const { options, challenge } = await registerOptions(h, user)
    const res = await registerVerify(h, user, { credential: authenticator.register({ challenge: options.challenge }), challenge, label: 'again' })
    await expectError(res, 400, 'Passkey already registered', 'PASSKEY_EXISTS')
    const [row] = await h.db.select().from(passkeys).where(eq(passkeys.id, authenticator.id))
    expect(row.label).toBe('Key')
  })
})

describe('passkeys: sign-in failures → 401, no cookie', () => {
  const refused = async (res: Response) => {
    expect(res.headers.get('set-cookie')).toBeNull()
    await expectError(res, 401, 'Passkey sign-in failed', 'PASSKEY_AUTH_FAILED')
  }

  it('an unknown credential', async () => {
    const stranger = new SoftAuthenticator(RP)
    await refused((await signIn(h, user.email, stranger)).res)
  })

  it('user verification off', async () => {
    await refused((await signIn(h, user.email, authenticator, { userVerified: false })).res)
  })

  it('another origin or relying party', async () => {
    await refused((await signIn(h, user.email, authenticator, { origin: 'http://localhost:4000' })).res)
    await refused((await signIn(h, user.email, authenticator, { rpId: 'example.com' })).res)
  })

  it('a bad signature', async () => {
    const { options, challenge } = await authOptions(h, user.email)
    const credential = authenticator.assert({ challenge: options.challenge })
    const sig = Buffer.from(credential.response.signature, 'base64url')
    sig[sig.length - 1] ^= 1
    credential.response.signature = sig.toString('base64url')
    await refused(await authVerify(h, { credential, challenge }))
  })

  it('a counter that does not increase', async () => {
    const [row] = await h.db.select().from(passkeys).where(eq(passkeys.id, authenticator.id))
    await refused((await signIn(h, user.email, authenticator, { counter: row.counter })).res)
    await refused((await signIn(h, user.email, authenticator, { counter: 0 })).res)
    expect((await signIn(h, user.email, authenticator, { counter: row.counter + 1 })).res.status).toBe(200)
  })

  it('options for an unknown email sign no one in, even with a registered passkey', async () => {
    await refused((await signIn(h, `ghost-${crypto.randomUUID()}@example.com`, authenticator)).res)
  })
})
