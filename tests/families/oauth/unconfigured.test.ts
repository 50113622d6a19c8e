import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../support/harness'
import { callback, landing, OTHER_CLIENT_ID, postRisc, RISC } from './helpers'

/** A loopback port nothing listens on: the provider is down. */
async function deadUrl() {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((r) => s.close(() => r()))
  return `http://127.0.0.1:${port}`
}

let h: Harness
let provider: string
beforeAll(async () => {
  provider = await deadUrl()
  // No GOOGLE_CLIENT_ID (sign-in off), but a RISC audience and an unreachable provider.
  h = await createHarness({ env: { GOOGLE_ISSUER: provider, GOOGLE_CLIENT_IDS: OTHER_CLIENT_ID } })
})
afterAll(() => h?.close())

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
