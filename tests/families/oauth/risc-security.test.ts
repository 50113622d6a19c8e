import { eq } from 'drizzle-orm'
import { base64url, generateKeyPair, importJWK, SignJWT } from 'jose'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { JWKS_REFETCH_COOLDOWN_MS } from '../../../functions/oauth/oidc'
import { signDelivery } from '../../../lib/queue/sign'
import { accounts, securityEvents, sessions } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { startOidcServer } from '../../support/oidc-server'
import { CLIENT_ID, googleEnv, issSub, postRisc, queueIdle, RISC, riscToken } from './helpers'

const oidc = useFixture(() => startOidcServer())
const h = useHarness(() => ({ env: googleEnv(oidc) }))
afterEach(() => {
  vi.useRealTimers()
})

const INVALID = { error: 'Invalid security event token', code: 'INVALID_SECURITY_EVENT' }
const enc = (v: unknown) => base64url.encode(JSON.stringify(v))
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: oidc.url,
  aud: CLIENT_ID,
  iat: Math.floor(Date.now() / 1000),
  jti: `jti-${crypto.randomUUID()}`,
  events: { [`${RISC}sessions-revoked`]: { subject: issSub(oidc, 'sub-x') } },
  ...extra,
})
const eventCount = async () => (await h.db.select().from(securityEvents)).length

async function expectRejected(token: string) {
  const res = await postRisc(h, token)
  expect(res.status).toBe(400)
  expect(await res.json()).toEqual(INVALID)
}

describe('RISC: only genuine tokens are accepted', () => {
  it('alg none and HS256 (key confusion) → 400 before any request to the provider', async () => {
    const none = `${enc({ alg: 'none', kid: oidc.firstKid, typ: 'JWT' })}.${enc(claims())}.`
    await expectRejected(none)
    const publicN = String(oidc.issuer.keys.toJSON()[0].n)
    const hs256 = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: oidc.firstKid }).sign(new TextEncoder().encode(publicN))
    await expectRejected(hs256)
    expect(oidc.requests).toEqual([])
  })

  it('wrong issuer, wrong audience, expired, not yet valid → 400', async () => {
    const now = Math.floor(Date.now() / 1000)
    await expectRejected(await riscToken(oidc, 'sessions-revoked', issSub(oidc, 's'), { claims: { iss: 'https://accounts.evil.example' } }))
    await expectRejected(await riscToken(oidc, 'sessions-revoked', issSub(oidc, 's'), { claims: { aud: 'someone-elses-client' } }))
    await expectRejected(await riscToken(oidc, 'sessions-revoked', issSub(oidc, 's'), { claims: { iat: now - 7200, exp: now - 3600 } }))
    await expectRejected(await riscToken(oidc, 'sessions-revoked', issSub(oidc, 's'), { claims: { nbf: now + 3600 } }))
    expect(await eventCount()).toBe(0)
  })

  it('another RSA algorithm with the right key (RS384), a tampered payload, no kid → 400', async () => {
    const privateJwk = oidc.issuer.keys.get(oidc.firstKid)!
    const rs384 = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'RS384', kid: oidc.firstKid })
      .sign(await importJWK({ ...privateJwk, alg: 'RS384' }, 'RS384'))
    await expectRejected(rs384)

    const [header, , signature] = (await riscToken(oidc, 'verification', undefined)).split('.')
    await expectRejected(`${header}.${enc(claims({ aud: CLIENT_ID }))}.${signature}`)

    const { privateKey } = await generateKeyPair('RS256')
    await expectRejected(await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256' }).sign(privateKey))
    expect(await eventCount()).toBe(0)
  })

  it('malformed bodies and claims → 400: empty, garbage, no jti, no events', async () => {
    for (const body of ['', 'not a jwt', 'a.b.c', '{"jti":"x"}']) await expectRejected(body)
    await expectRejected(await riscToken(oidc, 'verification', undefined, { claims: { jti: undefined } }))
    await expectRejected(await riscToken(oidc, 'verification', undefined, { claims: { events: {} } }))
    await expectRejected(await riscToken(oidc, 'verification', undefined, { claims: { events: 'nope' } }))
    expect(await eventCount()).toBe(0)
  })

  it('an unknown kid → 400; within the cooldown it costs no JWKS fetch', async () => {
    await postRisc(h, await riscToken(oidc, 'verification', undefined)) // warms the cache
    const fetches = oidc.count('/jwks')
    const { privateKey } = await generateKeyPair('RS256')
    for (let i = 0; i < 3; i++) {
      await expectRejected(await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: `made-up-${i}` }).sign(privateKey))
    }
    expect(oidc.count('/jwks')).toBe(fetches)
  })

  it('a rotated key: refused while the cached JWKS is fresh, accepted after one refetch once the cooldown passed', async () => {
    const user = await h.seedUser('Rotated', `rotated-${crypto.randomUUID().slice(0, 6)}@example.com`)
    await h.db.insert(accounts).values({ userId: user.id, provider: 'google', providerAccountId: 'sub-rotated', email: user.email })
    // A first event verified with the old key: its JWKS is cached.
    expect((await postRisc(h, await riscToken(oidc, 'verification', undefined))).status).toBe(202)
    const fetches = oidc.count('/jwks')

    const { kid } = await oidc.rotate()
    const token = await riscToken(oidc, 'sessions-revoked', issSub(oidc, 'sub-rotated'), { kid })
    await expectRejected(token)
    expect(oidc.count('/jwks')).toBe(fetches)

    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + JWKS_REFETCH_COOLDOWN_MS + 1000)
    const res = await postRisc(h, token)
    expect(res.status).toBe(202)
    expect(oidc.count('/jwks')).toBe(fetches + 1)
    await queueIdle(h) // delivered under the same clock
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, user.id))).toEqual([])

    // The refetch restarted the cooldown: another unknown kid is refused without a fetch.
    const { privateKey } = await generateKeyPair('RS256')
    await expectRejected(await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'after-rotation' }).sign(privateKey))
    expect(oidc.count('/jwks')).toBe(fetches + 1)
  })
})

describe('RISC: the queue receiver and the retired path', () => {
  it('an unsigned or wrongly signed POST to /api/queue/risc → 401, nothing processed', async () => {
    const jti = 'jti-receiver-probe'
    await h.db.insert(securityEvents).values({ jti, issuer: oidc.url, eventTypes: [`${RISC}verification`], payload: {} })
    const body = JSON.stringify({ jti })
    const unsigned = await h.web.request('/api/queue/risc', { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    expect(unsigned.status).toBe(401)
    expect(await unsigned.json()).toEqual({ error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' })
    const forged = await h.web.request('/api/queue/risc', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'upstash-signature': await signDelivery('not-the-key', 'http://localhost/api/queue/risc', body) },
      body,
    })
    expect(forged.status).toBe(401)
    expect(await forged.json()).toEqual({ error: 'Invalid queue signature', code: 'INVALID_SIGNATURE' })
    const [row] = await h.db.select().from(securityEvents).where(eq(securityEvents.jti, jti))
    expect(row.processedAt).toBeNull()
  })

  it('POST /api/auth/google/risc → 410 DEPRECATED', async () => {
    const res = await h.web.request('/api/auth/google/risc', { method: 'POST', body: 'x' })
    expect(res.status).toBe(410)
    expect(await res.json()).toEqual({ error: 'Gone: use POST /api/security/risc', code: 'DEPRECATED' })
    expect(res.headers.get('link')).toBe('</api/security/risc>; rel="successor-version"')
  })
})
