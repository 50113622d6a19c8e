import { describe, expect, it } from 'vitest'
import { signToken, verifyToken } from '../../lib/auth/signed-token'

const SECRET = 'signed-token-test-secret'
const NOW = Date.UTC(2030, 0, 1)

const parts = (token: string) => token.split('.')
const payloadOf = (token: string) => JSON.parse(Buffer.from(parts(token)[1], 'base64url').toString())
const withPayload = (token: string, payload: object) => {
  const [header, , signature] = parts(token)
  return `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`
}

describe('signed tokens', () => {
  it('round-trips its claims as a compact HS256 JWT bound to its purpose', async () => {
    const token = await signToken(SECRET, 'radio-dj-access', { sub: 'session-1', wallet: '0xabc' }, { expiresInSec: 600, now: NOW })
    expect(parts(token)).toHaveLength(3)
    expect(JSON.parse(Buffer.from(parts(token)[0], 'base64url').toString())).toEqual({ alg: 'HS256' })
    expect(await verifyToken(SECRET, 'radio-dj-access', token, { now: NOW + 1000 })).toEqual({
      sub: 'session-1',
      wallet: '0xabc',
      aud: 'radio-dj-access',
      iat: NOW / 1000,
      exp: NOW / 1000 + 600,
    })
  })

  it('a token of one purpose is refused as another', async () => {
    const state = await signToken(SECRET, 'calendar-oauth-state', { sub: 'user-1', jti: 'a'.repeat(32) }, { expiresInSec: 600, now: NOW })
    expect(await verifyToken(SECRET, 'calendar-oauth-state', state, { now: NOW })).not.toBeNull()
    expect(await verifyToken(SECRET, 'google-oauth-state', state, { now: NOW })).toBeNull()
    expect(await verifyToken(SECRET, 'radio-dj-access', state, { now: NOW })).toBeNull()
    // Nor can the purpose be edited: the signature covers it.
    const relabelled = withPayload(state, { ...payloadOf(state), aud: 'radio-dj-access' })
    expect(await verifyToken(SECRET, 'radio-dj-access', relabelled, { now: NOW })).toBeNull()
  })

  it('a tampered, expired, future or other-secret token is refused', async () => {
    const token = await signToken(SECRET, 'google-oauth-state', { jti: 'b'.repeat(32) }, { expiresInSec: 600, now: NOW })
    const tampered = withPayload(token, { ...payloadOf(token), jti: 'c'.repeat(32) })
    const [header, payload, signature] = parts(token)
    const flipped = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`
    const otherSecret = await signToken('another-secret', 'google-oauth-state', { jti: 'b'.repeat(32) }, { expiresInSec: 600, now: NOW })
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`
    for (const bad of [tampered, flipped, otherSecret, unsigned, `${header}.${payload}`, 'x.y.z', '']) {
      expect(await verifyToken(SECRET, 'google-oauth-state', bad, { now: NOW })).toBeNull()
    }
    // Expired at `exp`, to the second.
    expect(await verifyToken(SECRET, 'google-oauth-state', token, { now: NOW + 599_000 })).not.toBeNull()
    expect(await verifyToken(SECRET, 'google-oauth-state', token, { now: NOW + 600_000 })).toBeNull()
    // Issued in the future: up to a minute of clock skew is taken, more is not.
    expect(await verifyToken(SECRET, 'google-oauth-state', token, { now: NOW - 60_000 })).not.toBeNull()
    expect(await verifyToken(SECRET, 'google-oauth-state', token, { now: NOW - 61_000 })).toBeNull()
  })

  it('lives until a given moment when signed with `expiresAt`', async () => {
    const token = await signToken(SECRET, 'radio-dj-access', { sub: 's' }, { expiresAt: new Date(NOW + 7200_000), now: NOW })
    expect(payloadOf(token).exp).toBe(NOW / 1000 + 7200)
    expect(await verifyToken(SECRET, 'radio-dj-access', token, { now: NOW + 7199_000 })).not.toBeNull()
    expect(await verifyToken(SECRET, 'radio-dj-access', token, { now: NOW + 7200_000 })).toBeNull()
  })
})
