import { eq, like } from 'drizzle-orm'
import { generateKeyPair, SignJWT } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { users } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { call, DOMAIN, farcasterWith, HOLDER, idToken, openSessionToken, SERVICE_DOMAIN, signSessionToken, startPeers } from './support/peers'
import { FORBIDDEN_ORIGIN } from '../../support/requests'

const peers = useFixture(() => startPeers())
const h = useHarness(() => ({ env: peers.env }))

const VERIFY = '/api/auth/farcaster/verify'
const REFRESH = '/api/auth/farcaster/refresh'
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8'))
const now = () => Math.floor(Date.now() / 1000)
const farcasterUsers = () => h.db.select({ id: users.id }).from(users).where(like(users.email, `%@farcaster.${SERVICE_DOMAIN}`))

/** The claims a good token carries, for forging variants of it. */
const goodClaims = (fid: number) => ({ iss: peers.issuerUrl, aud: DOMAIN, sub: String(fid), iat: now(), exp: now() + 3600 })

describe('farcaster verify: only genuine ID tokens sign in', () => {
  const forged: Array<[string, () => Promise<string>]> = [
    ['another issuer (the real Farcaster one)', () => idToken(peers, 7001, { iss: 'https://auth.farcaster.xyz' })],
    ['the issuer with a trailing slash', () => idToken(peers, 7001, { iss: `${peers.issuerUrl}/` })],
    ['another audience', () => idToken(peers, 7001, { aud: 'evil.example.com' })],
    ['an audience list without the domain', () => idToken(peers, 7001, { aud: ['evil.example.com', 'other.example'] })],
    ['no audience', () => idToken(peers, 7001, { aud: undefined })],
    ['expired', () => idToken(peers, 7001, {}, { expiresIn: -120 })],
    ['no exp', () => idToken(peers, 7001, { exp: undefined })],
    ['no iat', () => idToken(peers, 7001, { iat: undefined })],
    ['iat an hour in the future', () => idToken(peers, 7001, { iat: now() + 3600, exp: now() + 7200 })],
    ['not yet valid (nbf)', () => idToken(peers, 7001, { nbf: now() + 3600 })],
    ['no sub', () => idToken(peers, 7001, { sub: undefined })],
    ['a non-numeric sub', () => idToken(peers, 7001, { sub: 'alice' })],
    ['sub 0', () => idToken(peers, 7001, { sub: 0 })],
    ['a negative sub', () => idToken(peers, 7001, { sub: -7001 })],
    ['a fractional sub', () => idToken(peers, 7001, { sub: 7001.5 })],
    ['a zero-padded sub', () => idToken(peers, 7001, { sub: '07001' })],
    ['an unsafe-integer sub', () => idToken(peers, 7001, { sub: '99999999999999999' })],
    [
      'signed by another key under the issuer key id',
      async () => {
        const { privateKey } = await generateKeyPair('RS256')
        return new SignJWT(goodClaims(7001)).setProtectedHeader({ alg: 'RS256', kid: peers.kids.rs256, typ: 'JWT' }).sign(privateKey)
      },
    ],
    [
      'signed by another key under an unknown key id',
      async () => {
        const { privateKey } = await generateKeyPair('ES256')
        return new SignJWT(goodClaims(7001)).setProtectedHeader({ alg: 'ES256', kid: 'attacker', typ: 'JWT' }).sign(privateKey)
      },
    ],
    ['alg: none', async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(goodClaims(7001))}.`],
    ['alg: none with the issuer kid', async () => `${b64({ alg: 'none', kid: peers.kids.rs256 })}.${b64(goodClaims(7001))}.`],
    [
      'HS256 keyed with the published public key (algorithm confusion)',
      async () => {
        const jwks = await (await fetch(peers.jwksUrl)).text()
        return new SignJWT(goodClaims(7001)).setProtectedHeader({ alg: 'HS256', kid: peers.kids.rs256 }).sign(new TextEncoder().encode(jwks))
      },
    ],
    [
      'payload tampered (another fid), signature kept',
      async () => {
        const [head, body, sig] = (await idToken(peers, 7002)).split('.')
        return `${head}.${b64({ ...unb64(body), sub: 7001 })}.${sig}`
      },
    ],
    [
      'signature tampered',
      async () => {
        const [head, body, sig] = (await idToken(peers, 7001)).split('.')
        return `${head}.${body}.${sig.slice(0, -4)}${sig.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`
      },
    ],
    [
      'header swapped to the EdDSA key',
      async () => {
        const [head, body, sig] = (await idToken(peers, 7001)).split('.')
        return `${b64({ ...unb64(head), alg: 'EdDSA', kid: peers.kids.eddsa })}.${body}.${sig}`
      },
    ],
    ['not a JWT', async () => 'not-a-jwt'],
    ['three garbage parts', async () => 'a.b.c'],
  ]

  for (const [label, make] of forged) {
    it(`${label} → 401 INVALID_TOKEN; no user, no cookie`, async () => {
      const before = await farcasterUsers()
      const res = await call(h.web, 'POST', VERIFY, { token: await make() })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ error: 'Invalid Farcaster token', code: 'INVALID_TOKEN' })
      expect(res.headers.get('set-cookie')).toBeNull()
      expect(await farcasterUsers()).toEqual(before)
    })
  }

  it('the genuine token those were forged from does sign in (the cases above fail for their flaw alone)', async () => {
    const res = await call(h.web, 'POST', VERIFY, { token: await idToken(peers, 7001) })
    expect(res.status).toBe(200)
  })

  it('a sessionToken is not an ID token', async () => {
    const { sessionToken } = await (await call(h.web, 'POST', VERIFY, { token: await idToken(peers, 7003) })).json()
    expect((await call(h.web, 'POST', VERIFY, { token: sessionToken })).status).toBe(401)
  })

  it('a foreign Origin cannot sign the browser in → 403 ORIGIN_NOT_ALLOWED, nothing created', async () => {
    const res = await call(h.web, 'POST', VERIFY, { token: await idToken(peers, 7004) }, { origin: 'http://evil.example' })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual(FORBIDDEN_ORIGIN)
    expect(await h.db.select().from(users).where(eq(users.email, `7004@farcaster.${SERVICE_DOMAIN}`))).toHaveLength(0)
  })
})

describe('farcaster refresh: only tokens this server signed', () => {
  let issued: { sessionToken: string; user: { id: string } }
  beforeAll(async () => {
    issued = await (await call(h.web, 'POST', VERIFY, { token: await idToken(peers, 7101) })).json()
  })
  const refresh = (sessionToken: string) => call(h.web, 'POST', REFRESH, { sessionToken })

  it('the genuine token refreshes', async () => {
    expect((await refresh(issued.sessionToken)).status).toBe(200)
  })

  it('tampered data (another fid or user, a later exp) with the signature kept → 401', async () => {
    const [data, sig] = issued.sessionToken.split('.')
    const claims = unb64(data)
    for (const changed of [{ fid: 1 }, { userId: h.users.alice.id }, { exp: claims.exp + 86400 * 365 }]) {
      const res = await refresh(`${b64({ ...claims, ...changed })}.${sig}`)
      expect(res.status, JSON.stringify(changed)).toBe(401)
      expect(await res.json()).toEqual({ error: 'Invalid session token', code: 'INVALID_TOKEN' })
    }
  })

  it('a tampered or truncated signature → 401', async () => {
    const [data, sig] = issued.sessionToken.split('.')
    const flipped = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`
    for (const bad of [flipped, sig.slice(0, -1), `${sig}A`, b64('x')]) expect((await refresh(`${data}.${bad}`)).status).toBe(401)
  })

  it('signed with another secret (a short one, or SESSION_SECRET) → 401', async () => {
    const claims = { fid: 7101, userId: issued.user.id, iat: now(), exp: now() + 3600 }
    for (const secret of ['another-secret', 'x', 'test-session-secret']) {
      expect((await refresh(await signSessionToken(claims, secret))).status, secret).toBe(401)
    }
  })

  it('a refresh never changes whose token it is', async () => {
    const body = await (await refresh(issued.sessionToken)).json()
    const { data } = await openSessionToken(body.sessionToken)
    expect(data).toMatchObject({ fid: 7101, userId: issued.user.id })
  })

  it('an ID token is not a session token', async () => {
    expect((await refresh(await idToken(peers, 7101))).status).toBe(401)
  })
})

describe('token gating: the RPC endpoint is reflected without credentials', () => {
  it('a key in the query string works against the chain but is not shown', async () => {
    const app = farcasterWith(h, { BASE_RPC_URL: `${peers.anvil.url}/?apikey=SECRET-KEY-123` })
    const res = await call(app, 'POST', '/api/token-gating', { address: HOLDER })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({ hasAccess: true, rpcEndpoint: peers.anvil.url })
    expect(text).not.toContain('SECRET')
  })

  it('userinfo, a key in the path and the query are all stripped from the metadata too', async () => {
    for (const [url, shown] of [
      ['https://user:pa55@rpc.example.com/v2/SECRET-PATH-KEY?key=SECRET', 'https://rpc.example.com'],
      ['https://base-mainnet.g.alchemy.com/v2/SECRET-ALCHEMY', 'https://base-mainnet.g.alchemy.com'],
      ['https://mainnet.base.org', 'https://mainnet.base.org'],
    ]) {
      const res = await farcasterWith(h, { BASE_RPC_URL: url }).request(VERIFY)
      const text = await res.text()
      expect(JSON.parse(text).tokenGating.rpcEndpoint).toBe(shown)
      expect(text).not.toMatch(/SECRET|pa55/)
    }
  })
})
