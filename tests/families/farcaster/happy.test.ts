import { eq } from 'drizzle-orm'
import { describe, expect, it, vi } from 'vitest'
import { getAddress } from 'viem'
import { SESSION_COOKIE } from '../../../lib/auth/session'
import { mailOutbox, sessions, users } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import {
  AT_MIN,
  BELOW_MIN,
  call,
  DOMAIN,
  farcasterWith,
  HOLDER,
  idToken,
  NOBODY,
  openSessionToken,
  proveAddress,
  SERVICE_DOMAIN,
  startPeers,
} from './support/peers'

const peers = useFixture(() => startPeers())
const h = useHarness(() => ({ env: peers.env }))

const verify = (body: unknown) => call(h.web, 'POST', '/api/auth/farcaster/verify', body)
const welcomesTo = async (email: string) =>
  (await h.db.select().from(mailOutbox).where(eq(mailOutbox.to, email))).filter((m) => m.kind === 'welcome')

describe('farcaster verify: metadata', () => {
  it('GET answers the issuer, the audience domain and the token gate', async () => {
    const res = await h.web.request('/api/auth/farcaster/verify')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      issuer: peers.issuerUrl,
      domain: DOMAIN,
      tokenGating: { enabled: true, contractAddress: peers.token, minBalance: '1', rpcEndpoint: peers.anvil.url, chainId: 8453 },
    })
  })

  it('GET without a gate or a domain: disabled, and the domain is the service domain', async () => {
    const res = await farcasterWith(h, { TOKEN_GATE_CONTRACT: undefined, FARCASTER_DOMAIN: undefined }).request('/api/auth/farcaster/verify')
    const body = await res.json()
    expect(body.domain).toBe(SERVICE_DOMAIN)
    expect(body.tokenGating).toMatchObject({ enabled: false, contractAddress: null, minBalance: null })
  })
})

describe('farcaster verify: sign-in', () => {
  const fid = 4242
  const email = `${fid}@farcaster.${SERVICE_DOMAIN}`
  let firstUserId: string

  it('a valid ID token creates the user with the derived email, mails the welcome, sets the cookie and returns a signed sessionToken', async () => {
    const before = Date.now()
    const res = await verify({ token: await idToken(peers, fid) })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'fid', 'ok', 'sessionToken', 'user'])
    expect(body.ok).toBe(true)
    expect(body.fid).toBe(fid)
    expect(body.user.name).toBe(`fid:${fid}`)

    const [row] = await h.db.select().from(users).where(eq(users.email, email))
    expect(row.id).toBe(body.user.id)
    firstUserId = row.id
    expect(await welcomesTo(email)).toHaveLength(1)

    const cookie = res.headers.get('set-cookie') ?? ''
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[0-9a-f]{64};`))
    expect(cookie).toContain('HttpOnly')
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, row.id))).toHaveLength(1)
    const me = await h.web.request('/api/user', { headers: { cookie: cookie.split(';')[0] } })
    expect(me.status).toBe(200)

    expect(body.sessionToken).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    const opened = await openSessionToken(body.sessionToken)
    expect(opened.valid).toBe(true)
    expect(opened.data).toEqual({ fid, userId: row.id, iat: expect.any(Number), exp: expect.any(Number) })
    expect(opened.data.iat * 1000).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
    expect(opened.data.exp - opened.data.iat).toBe(7 * 24 * 3600)
    expect(body.expiresAt).toBe(new Date(opened.data.exp * 1000).toISOString())
  })

  it('a second verify for the same FID signs in the same user: no new user, no second welcome', async () => {
    const res = await verify({ token: await idToken(peers, String(fid)) })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.user.id).toBe(firstUserId)
    expect(await h.db.select().from(users).where(eq(users.email, email))).toHaveLength(1)
    expect(await welcomesTo(email)).toHaveLength(1)
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, firstUserId))).toHaveLength(2)
  })

  it('links an existing account that already has the derived email', async () => {
    const existing = await h.seedUser('Carol', `77@farcaster.${SERVICE_DOMAIN}`)
    const res = await verify({ token: await idToken(peers, 77) })
    expect(res.status).toBe(200)
    expect((await res.json()).user).toEqual({ id: existing.id, name: 'Carol' })
    expect(await welcomesTo(existing.email)).toHaveLength(0)
  })

  it('accepts tokens signed with any key of the issuer: EdDSA as well as RS256', async () => {
    const res = await verify({ token: await idToken(peers, 556, {}, { kid: peers.kids.eddsa }) })
    expect(res.status).toBe(200)
    expect((await res.json()).fid).toBe(556)
  })

  it('a key the issuer adds later (rotation) is fetched once the 30 s refetch cooldown has passed', async () => {
    const rotated = await peers.issuer.issuer.keys.generate('ES256')
    const token = await idToken(peers, 557, {}, { kid: rotated.kid })
    expect((await verify({ token })).status).toBe(401) // key set fetched moments ago: no refetch yet
    const now = Date.now()
    vi.spyOn(Date, 'now').mockReturnValue(now + 31_000)
    try {
      expect((await verify({ token })).status).toBe(200)
    } finally {
      vi.restoreAllMocks()
    }
  })

  it("takes the account name from the token's name claim when present", async () => {
    const res = await verify({ token: await idToken(peers, 555, { name: 'Dan Romero' }) })
    expect((await res.json()).user.name).toBe('Dan Romero')
  })

  it('an address without a configured gate is ignored', async () => {
    const res = await call(farcasterWith(h, { TOKEN_GATE_CONTRACT: undefined }), 'POST', '/api/auth/farcaster/verify', {
      token: await idToken(peers, 9001),
      address: NOBODY,
    })
    expect(res.status).toBe(200)
    expect((await res.json()).tokenGate).toBeUndefined()
  })
})

describe('farcaster verify: token gate', () => {
  it('a holder passes: tokenGate {passed, balance, minBalance} in the answer', async () => {
    const token = await idToken(peers, 1001)
    const res = await verify({ token, address: HOLDER, addressSignature: await proveAddress(h.services.config, HOLDER, 1001, token) })
    expect(res.status).toBe(200)
    expect((await res.json()).tokenGate).toEqual({
      passed: true,
      balance: '5',
      balanceRaw: (5n * 10n ** 18n).toString(),
      minBalance: '1',
      contractAddress: peers.token,
    })
  })

  it('exactly the minimum passes', async () => {
    const token = await idToken(peers, 1002)
    const address = AT_MIN.toUpperCase().replace('0X', '0x') // any case: the message names it checksummed
    const res = await verify({ token, address, addressSignature: await proveAddress(h.services.config, address, 1002, token) })
    expect(res.status).toBe(200)
    expect((await res.json()).tokenGate.passed).toBe(true)
  })
})

describe('farcaster refresh', () => {
  it('GET describes the refresh', async () => {
    const res = await h.web.request('/api/auth/farcaster/refresh')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ method: 'POST', body: { sessionToken: 'string' }, ttlSeconds: 604800, algorithm: 'HMAC-SHA256' })
  })

  it('a valid token is re-signed with a later exp, for the same fid and user', async () => {
    const signed = await (await verify({ token: await idToken(peers, 3003) })).json()
    const before = await openSessionToken(signed.sessionToken)
    const now = Date.now()
    vi.spyOn(Date, 'now').mockReturnValue(now + 60_000) // a minute later: exp has second resolution
    const res = await call(h.web, 'POST', '/api/auth/farcaster/refresh', { sessionToken: signed.sessionToken })
    vi.restoreAllMocks()
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'sessionToken'])
    const after = await openSessionToken(body.sessionToken)
    expect(after.valid).toBe(true)
    expect(after.data.exp).toBeGreaterThanOrEqual(before.data.exp + 60)
    expect(after.data).toMatchObject({ fid: 3003, userId: signed.user.id })
    expect(body.expiresAt).toBe(new Date(after.data.exp * 1000).toISOString())
    // the refreshed token refreshes again
    expect((await call(h.web, 'POST', '/api/auth/farcaster/refresh', { sessionToken: body.sessionToken })).status).toBe(200)
  })

  it('without FARCASTER_SESSION_SECRET, NEXTAUTH_SECRET signs (verify) and verifies (refresh)', async () => {
    const app = farcasterWith(h, { FARCASTER_SESSION_SECRET: undefined, NEXTAUTH_SECRET: 'nextauth-fallback', NODE_ENV: 'production' })
    const res = await call(app, 'POST', '/api/auth/farcaster/verify', { token: await idToken(peers, 3004) })
    expect(res.status).toBe(200)
    const { sessionToken } = await res.json()
    expect((await openSessionToken(sessionToken, 'nextauth-fallback')).valid).toBe(true)
    expect((await openSessionToken(sessionToken)).valid).toBe(false)
    expect((await call(app, 'POST', '/api/auth/farcaster/refresh', { sessionToken })).status).toBe(200)
    // the primary secret is not the fallback: a token under one does not refresh under the other
    expect((await call(h.web, 'POST', '/api/auth/farcaster/refresh', { sessionToken })).status).toBe(401)
  })
})

describe('token gating', () => {
  const post = (address: string) => call(h.web, 'POST', '/api/token-gating', { address })
  const get = (address: string) => h.web.request(`/api/token-gating?address=${encodeURIComponent(address)}`)

  it('a holder has access: balance in token units and base units, the settings reflected', async () => {
    const res = await post(HOLDER)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      address: getAddress(HOLDER),
      hasAccess: true,
      balance: '5',
      balanceRaw: '5000000000000000000',
      minBalance: '1',
      decimals: 18,
      contractAddress: peers.token,
      rpcEndpoint: peers.anvil.url,
      chainId: 8453,
    })
  })

  it('a non-holder has no access, balance 0', async () => {
    const body = await (await post(NOBODY)).json()
    expect(body).toMatchObject({ hasAccess: false, balance: '0', balanceRaw: '0' })
  })

  it('exactly the minimum has access; one base unit less has not', async () => {
    expect(await (await post(AT_MIN)).json()).toMatchObject({ hasAccess: true, balance: '1', balanceRaw: '1000000000000000000' })
    expect(await (await post(BELOW_MIN)).json()).toMatchObject({ hasAccess: false, balance: '0.999999999999999999' })
  })

  it('GET and POST give the same answer for each address, whatever its case', async () => {
    for (const address of [HOLDER, AT_MIN, BELOW_MIN, NOBODY, HOLDER.toUpperCase().replace('0X', '0x')]) {
      const [a, b] = await Promise.all([post(address), get(address)])
      expect(b.status).toBe(200)
      expect(await b.json()).toEqual(await a.json())
    }
  })

  it('the minimum is in token units: 0.5 lets BELOW_MIN in, 6 keeps HOLDER out', async () => {
    const half = farcasterWith(h, { TOKEN_GATE_MIN_BALANCE: '0.5' })
    expect(await (await call(half, 'POST', '/api/token-gating', { address: BELOW_MIN })).json()).toMatchObject({ hasAccess: true, minBalance: '0.5' })
    const six = farcasterWith(h, { TOKEN_GATE_MIN_BALANCE: '6' })
    expect(await (await call(six, 'POST', '/api/token-gating', { address: HOLDER })).json()).toMatchObject({ hasAccess: false, minBalance: '6' })
  })
})

describe('farcaster: OpenAPI', () => {
  it('the web document describes the six operations and the token units', async () => {
    const doc = (await (await h.web.request('/api/openapi.json')).json()) as { paths: Record<string, Record<string, { description?: string }>> }
    expect(Object.keys(doc.paths['/api/auth/farcaster/verify']).sort()).toEqual(['get', 'post'])
    expect(Object.keys(doc.paths['/api/auth/farcaster/refresh']).sort()).toEqual(['get', 'post'])
    expect(Object.keys(doc.paths['/api/token-gating']).sort()).toEqual(['get', 'post'])
    expect(doc.paths['/api/token-gating'].get.description).toContain('token units')
    expect(doc.paths['/api/auth/farcaster/verify'].post.description).toContain('@farcaster.<service_domain>')
  })
})
