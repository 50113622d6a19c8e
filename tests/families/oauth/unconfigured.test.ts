import { generateKeyPair, SignJWT } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { useHarness } from '../../support/harness'
import { closedUrl } from '../../support/loopback'
import { callback, landing, OTHER_CLIENT_ID, postRisc, RISC } from './helpers'

let provider: string
beforeAll(async () => {
  provider = await closedUrl() // the provider is down: nothing listens there
})
// No GOOGLE_CLIENT_ID (sign-in off), but a RISC audience and an unreachable provider.
const h = useHarness(() => ({ env: { GOOGLE_ISSUER: provider, GOOGLE_CLIENT_IDS: OTHER_CLIENT_ID } }))

const token = async (aud: string) => {
  const { privateKey } = await generateKeyPair('RS256')
  return new SignJWT({ jti: 'j1', events: { [`${RISC}verification`]: {} } })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(provider)
    .setAudience(aud)
    .setIssuedAt()
    .sign(privateKey)
}

describe('google not configured, provider down', () => {
  it('start and callback → /login?error=GoogleNotConfigured (on the dashboard origin)', async () => {
    const res = await h.web.request('/api/auth/google')
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('http://localhost:3000/login?error=GoogleNotConfigured')
    expect(landing(await callback(h, { code: 'c', state: 's' }))).toBe('error:GoogleNotConfigured')
  })

  it('RISC: an audience that is not configured → 400 without contacting the provider', async () => {
    const res = await postRisc(h, await token('test-client.apps.googleusercontent.com'))
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid security event token', code: 'INVALID_SECURITY_EVENT' })
  })

  it("RISC: the provider's keys unreachable → 503 PROVIDER_UNAVAILABLE (the transmitter retries), not 400", async () => {
    const res = await postRisc(h, await token(OTHER_CLIENT_ID))
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Identity provider unavailable', code: 'PROVIDER_UNAVAILABLE' })
  })

  it('GET /api/security/risc still answers', async () => {
    const res = await h.web.request('/api/security/risc')
    expect(await res.json()).toEqual({ status: 'ok' })
  })
})
