import { SignJWT } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { MemoryKv } from '../../../lib/kv/memory'
import {
  discoveryCacheKey,
  getDiscovery,
  issuerVariants,
  jwksCacheKey,
  JWKS_REFETCH_COOLDOWN_MS,
  OidcUnavailableError,
  verifyProviderJwt,
} from '../../../functions/oauth/oidc'
import { startOidcServer, type OidcServer } from '../../support/oidc-server'

let oidc: OidcServer
beforeAll(async () => {
  oidc = await startOidcServer()
})
afterAll(() => oidc?.close())
afterEach(() => {
  vi.useRealTimers()
})

const verify = (kv: MemoryKv, token: string, jwksUri = `${oidc.url}/jwks`) =>
  verifyProviderJwt(token, { kv, jwksUri: async () => jwksUri, issuer: [oidc.url], audience: ['aud-1'] })

describe('lib/oidc against a real provider (no harness)', () => {
  it('discovery: fetched once, then from kv; the issuer must match', async () => {
    const kv = new MemoryKv()
    const before = oidc.count('/.well-known/openid-configuration')
    const doc = await getDiscovery(kv, oidc.discoveryUrl, `${oidc.url}/`)
    expect(doc).toEqual({
      issuer: oidc.url,
      authorization_endpoint: `${oidc.url}/authorize`,
      token_endpoint: `${oidc.url}/token`,
      jwks_uri: `${oidc.url}/jwks`,
    })
    await getDiscovery(kv, oidc.discoveryUrl, oidc.url)
    expect(oidc.count('/.well-known/openid-configuration')).toBe(before + 1)
    expect(await kv.get(discoveryCacheKey(oidc.discoveryUrl))).toEqual(doc)

    await expect(getDiscovery(new MemoryKv(), oidc.discoveryUrl, 'https://accounts.google.com')).rejects.toBeInstanceOf(OidcUnavailableError)
    await expect(getDiscovery(new MemoryKv(), `${oidc.url}/missing`, oidc.url)).rejects.toBeInstanceOf(OidcUnavailableError)
  })

  it('issuer spellings: trailing slash either way, and Google’s bare host', () => {
    expect(issuerVariants('https://accounts.google.com')).toEqual(['https://accounts.google.com', 'https://accounts.google.com/', 'accounts.google.com'])
    expect(issuerVariants('http://127.0.0.1:1/')).toEqual(['http://127.0.0.1:1', 'http://127.0.0.1:1/'])
  })

  it('verify: RS256 from the JWKS by kid; the JWKS is cached with its fetch time', async () => {
    const kv = new MemoryKv()
    const token = await oidc.sign({ aud: 'aud-1', sub: 's' })
    expect((await verify(kv, token)).sub).toBe('s')
    const cached = await kv.get<{ jwks: { keys: unknown[] }; fetchedAt: number }>(jwksCacheKey(`${oidc.url}/jwks`))
    expect(cached?.jwks.keys.length).toBeGreaterThan(0)
    expect(Math.abs(Date.now() - cached!.fetchedAt)).toBeLessThan(5000)
  })

  it('an unreachable or malformed JWKS is OidcUnavailableError, not an invalid token', async () => {
    const token = await oidc.sign({ aud: 'aud-1' })
    await expect(verify(new MemoryKv(), token, `${oidc.url}/nope`)).rejects.toBeInstanceOf(OidcUnavailableError)
    await expect(verify(new MemoryKv(), token, oidc.discoveryUrl)).rejects.toBeInstanceOf(OidcUnavailableError)
  })

  it('unknown kid: refetches only when the cached set is older than the cooldown', async () => {
    const kv = new MemoryKv()
    await verify(kv, await oidc.sign({ aud: 'aud-1' }))
    const fetches = oidc.count('/jwks')
    const { kid } = await oidc.rotate()
    const rotated = await oidc.sign({ aud: 'aud-1' }, { kid })
    await expect(verify(kv, rotated)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' })
    expect(oidc.count('/jwks')).toBe(fetches)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + JWKS_REFETCH_COOLDOWN_MS)
    await verify(kv, rotated)
    expect(oidc.count('/jwks')).toBe(fetches + 1)
    await verify(kv, rotated)
    expect(oidc.count('/jwks')).toBe(fetches + 1)
  })

  it('refuses HS256 even with a key the resolver would never hand out', async () => {
    const hs = await new SignJWT({ aud: 'aud-1', iss: oidc.url }).setProtectedHeader({ alg: 'HS256', kid: oidc.firstKid }).sign(new Uint8Array(32))
    await expect(verify(new MemoryKv(), hs)).rejects.toMatchObject({ code: 'ERR_JOSE_ALG_NOT_ALLOWED' })
  })
})
