import { eq } from 'drizzle-orm'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { users } from '../../../schema'
import { type Harness, useFixture, useHarness } from '../../support/harness'
import { startAnvil } from '../../support/anvil'
import { closedUrl } from '../../support/loopback'
import { BELOW_MIN, call, farcasterWith, HOLDER, idToken, NOBODY, SERVICE_DOMAIN, signSessionToken, proveAddress, startPeers } from './support/peers'

let rpcDown: string
const peers = useFixture(() => startPeers())
const otherChain = useFixture(() => startAnvil({ chainId: 1 }))
const h = useHarness(() => ({ env: peers.env }))
beforeAll(async () => {
  rpcDown = await closedUrl()
})
afterEach(() => {
  vi.restoreAllMocks()
})

const quiet = () => vi.spyOn(console, 'error').mockImplementation(() => {})
const VERIFY = '/api/auth/farcaster/verify'
const REFRESH = '/api/auth/farcaster/refresh'
const userOf = async (fid: number) => (await h.db.select().from(users).where(eq(users.email, `${fid}@farcaster.${SERVICE_DOMAIN}`)))[0]

describe('farcaster verify: bad requests', () => {
  it('no token, an empty token, a non-string token → 400 Token required', async () => {
    for (const body of [{}, { token: '' }, { token: 42 }]) {
      const res = await call(h.web, 'POST', VERIFY, body)
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'Token required', code: 'VALIDATION' })
    }
  })

  it('malformed JSON → 400 Invalid JSON body', async () => {
    const res = await call(h.web, 'POST', VERIFY, '{"token":')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })

  it('a malformed address → 400 Invalid address, before the token is even looked at', async () => {
    const res = await call(h.web, 'POST', VERIFY, { token: await idToken(peers, 6001), address: '0x1234' })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'Invalid address', code: 'VALIDATION' })
    expect(await userOf(6001)).toBeUndefined()
  })
})

describe('farcaster verify: token gate refuses', () => {
  it('a non-holder → 403 TOKEN_GATE with the balance; no user is created', async () => {
    for (const [fid, address, balance] of [[6101, NOBODY, '0'], [6102, BELOW_MIN, '0.999999999999999999']] as const) {
      const token = await idToken(peers, fid)
      const res = await call(h.web, 'POST', VERIFY, { token, address, addressSignature: await proveAddress(h.services.config, address, fid, token) })
      expect(res.status).toBe(403)
      const body = await res.json()
      expect(body).toMatchObject({ error: 'Token holding required', code: 'TOKEN_GATE', tokenGate: { passed: false, balance, minBalance: '1' } })
      expect(res.headers.get('set-cookie')).toBeNull()
      expect(await userOf(fid)).toBeUndefined()
    }
  })

  it('a malformed gate setting fails closed → 503, no user is created', async () => {
    quiet()
    const res = await call(farcasterWith(h, { TOKEN_GATE_CONTRACT: '0xnot' }), 'POST', VERIFY, { token: await idToken(peers, 6104), address: HOLDER })
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Token gating not configured', code: 'NOT_CONFIGURED' })
    expect(await userOf(6104)).toBeUndefined()
  })

  it('the chain unreachable → 503 Chain unavailable; no user is created', async () => {
    quiet()
    const token = await idToken(peers, 6103)
    // An EOA proof is recovered offline, so the balance read is what meets the dead RPC.
    const addressSignature = await proveAddress(h.services.config, HOLDER, 6103, token)
    const res = await call(farcasterWith(h, { BASE_RPC_URL: rpcDown }), 'POST', VERIFY, { token, address: HOLDER, addressSignature })
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Chain unavailable', code: 'CHAIN_UNAVAILABLE' })
    expect(await userOf(6103)).toBeUndefined()
  })
})

describe('farcaster verify: issuer key set unavailable', () => {
  it('JWKS on a closed port, answering 404 or not a key set → 503 Farcaster issuer unavailable', async () => {
    const logged = quiet()
    for (const url of [`${rpcDown}/jwks`, `${peers.issuerUrl}/no-such-jwks`, `${peers.issuerUrl}/.well-known/openid-configuration`]) {
      const res = await call(farcasterWith(h, { FARCASTER_JWKS_URL: url }), 'POST', VERIFY, { token: await idToken(peers, 6201) })
      expect(res.status, url).toBe(503)
      expect(await res.json()).toEqual({ error: 'Farcaster issuer unavailable', code: 'PROVIDER_UNAVAILABLE' })
    }
    expect(logged).toHaveBeenCalled()
    expect(await userOf(6201)).toBeUndefined()
  })
})

describe('farcaster session secret', () => {
  const noSecrets = { FARCASTER_SESSION_SECRET: undefined, NEXTAUTH_SECRET: undefined }

  it('production without FARCASTER_SESSION_SECRET or NEXTAUTH_SECRET → 500 on verify (nothing created) and refresh', async () => {
    const prod = farcasterWith(h, { ...noSecrets, NODE_ENV: 'production' })
    const res = await call(prod, 'POST', VERIFY, { token: await idToken(peers, 6301) })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'Farcaster session secret not configured', code: 'MISCONFIGURED' })
    expect(await userOf(6301)).toBeUndefined()
    const refresh = await call(prod, 'POST', REFRESH, { sessionToken: await signSessionToken({ fid: 1, userId: h.users.alice.id, iat: 1, exp: 4e9 }) })
    expect(refresh.status).toBe(500)
    expect(await refresh.json()).toEqual({ error: 'Farcaster session secret not configured', code: 'MISCONFIGURED' })
  })

  it('production: the metadata routes need no secret', async () => {
    const prod = farcasterWith(h, { ...noSecrets, NODE_ENV: 'production' })
    expect((await prod.request(VERIFY)).status).toBe(200)
    expect((await prod.request(REFRESH)).status).toBe(200)
  })

  it('development without either: a random per-process secret, with a warning; its tokens refresh in this process', async () => {
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const dev = farcasterWith(h, { ...noSecrets, NODE_ENV: 'development' })
    const res = await call(dev, 'POST', VERIFY, { token: await idToken(peers, 6302) })
    expect(res.status).toBe(200)
    const { sessionToken } = await res.json()
    expect((await call(dev, 'POST', REFRESH, { sessionToken })).status).toBe(200)
    expect((await call(dev, 'POST', VERIFY, { token: await idToken(peers, 6302) })).status).toBe(200)
    // Once per process, not per request: none here if an earlier file in this worker (the harness suites share
    // one process) was first.
    expect(warned.mock.calls.length).toBeLessThanOrEqual(1)
    for (const [line] of warned.mock.calls) expect(String(line)).toContain('random per-process secret')
  })
})

describe('farcaster refresh: refused', () => {
  const refresh = (sessionToken: unknown) => call(h.web, 'POST', REFRESH, { sessionToken })
  const now = () => Math.floor(Date.now() / 1000)

  it('no token → 400 Session token required', async () => {
    for (const body of [{}, { sessionToken: '' }, { sessionToken: 7 }]) {
      const res = await call(h.web, 'POST', REFRESH, body)
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'Session token required', code: 'VALIDATION' })
    }
  })

  it('an expired token (correctly signed) → 401 Invalid session token', async () => {
    const expired = await signSessionToken({ fid: 1, userId: h.users.alice.id, iat: now() - 8 * 86400, exp: now() - 86400 })
    const res = await refresh(expired)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'Invalid session token', code: 'INVALID_TOKEN' })
    const justNow = await signSessionToken({ fid: 1, userId: h.users.alice.id, iat: now() - 100, exp: now() })
    expect((await refresh(justNow)).status).toBe(401)
  })

  it('malformed tokens → 401', async () => {
    const good = await signSessionToken({ fid: 1, userId: h.users.alice.id, iat: now(), exp: now() + 3600 })
    const [data, sig] = good.split('.')
    for (const bad of ['nodot', '.', `${data}.`, `.${sig}`, `${data}.${sig}.x`, `${data}!.${sig}`, `${data}.${sig}=`, 'a'.repeat(4096)]) {
      const res = await refresh(bad)
      expect(res.status, bad).toBe(401)
      expect(await res.json()).toEqual({ error: 'Invalid session token', code: 'INVALID_TOKEN' })
    }
  })

  it('correctly signed but not a session (bad JSON, missing or wrong-typed fields) → 401', async () => {
    const part = (s: string) => Buffer.from(s).toString('base64url')
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(peers.env.FARCASTER_SESSION_SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    const signRaw = async (raw: string) =>
      `${part(raw)}.${Buffer.from(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(part(raw)))).toString('base64url')}`
    const exp = now() + 3600
    const cases = [
      '{not json',
      'null',
      JSON.stringify({ userId: h.users.alice.id, iat: now(), exp }),
      JSON.stringify({ fid: '1', userId: h.users.alice.id, iat: now(), exp }),
      JSON.stringify({ fid: 1, userId: h.users.alice.id, iat: now() }),
      JSON.stringify({ fid: 1, userId: h.users.alice.id, iat: now(), exp: String(exp) }),
      JSON.stringify({ fid: 1, iat: now(), exp }),
    ]
    for (const raw of cases) expect((await refresh(await signRaw(raw))).status, raw).toBe(401)
  })

  it('a token for a user that no longer exists → 401', async () => {
    const res = await refresh(await signSessionToken({ fid: 5, userId: crypto.randomUUID(), iat: now(), exp: now() + 3600 }))
    expect(res.status).toBe(401)
  })
})

describe('token gating: refused', () => {
  const post = (app: { request: Harness['web']['request'] }, body: unknown) => call(app, 'POST', '/api/token-gating', body)
  const get = (app: { request: Harness['web']['request'] }, query: string) => app.request(`/api/token-gating${query}`)

  it('a malformed or missing address → 400 Invalid address, on both verbs', async () => {
    const bad = ['', '0x', '0x1234', HOLDER.slice(2), `${HOLDER}0`, HOLDER.slice(0, -1), `0x${'g'.repeat(40)}`, ` ${HOLDER}`, `${HOLDER}\n`]
    for (const address of bad) {
      for (const res of [await post(h.web, { address }), await get(h.web, `?address=${encodeURIComponent(address)}`)]) {
        expect(res.status, JSON.stringify(address)).toBe(400)
        expect(await res.json()).toMatchObject({ error: 'Invalid address', code: 'VALIDATION' })
      }
    }
    for (const res of [await post(h.web, {}), await post(h.web, { address: 12 }), await get(h.web, '')]) {
      expect(res.status).toBe(400)
      expect((await res.json()).error).toBe('Invalid address')
    }
  })

  it('TOKEN_GATE_CONTRACT unset → 503 Token gating not configured, on both verbs', async () => {
    const app = farcasterWith(h, { TOKEN_GATE_CONTRACT: undefined })
    for (const res of [await post(app, { address: HOLDER }), await get(app, `?address=${HOLDER}`)]) {
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({ error: 'Token gating not configured', code: 'NOT_CONFIGURED' })
    }
  })

  it('a malformed TOKEN_GATE_CONTRACT or TOKEN_GATE_MIN_BALANCE counts as not configured (and is logged)', async () => {
    const logged = quiet()
    for (const overrides of [{ TOKEN_GATE_CONTRACT: 'not-an-address' }, { TOKEN_GATE_MIN_BALANCE: '-1' }, { TOKEN_GATE_MIN_BALANCE: 'one' }]) {
      const res = await post(farcasterWith(h, overrides), { address: HOLDER })
      expect(res.status, JSON.stringify(overrides)).toBe(503)
    }
    expect(logged).toHaveBeenCalled()
  })

  it('the RPC endpoint down → 503 Chain unavailable, on both verbs', async () => {
    quiet()
    const app = farcasterWith(h, { BASE_RPC_URL: rpcDown })
    for (const res of [await post(app, { address: HOLDER }), await get(app, `?address=${HOLDER}`)]) {
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({ error: 'Chain unavailable', code: 'CHAIN_UNAVAILABLE' })
    }
  })

  it('an RPC endpoint serving another chain → 503 (never a balance from the wrong chain)', async () => {
    const logged = quiet()
    const res = await post(farcasterWith(h, { BASE_RPC_URL: otherChain.url }), { address: HOLDER })
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Chain unavailable', code: 'CHAIN_UNAVAILABLE' })
    expect(logged.mock.calls.some((a) => String(a[0]).includes('not 8453'))).toBe(true)
  })

  it('a gate contract that is not an ERC-20 (an account without code) → 503', async () => {
    quiet()
    const res = await post(farcasterWith(h, { TOKEN_GATE_CONTRACT: NOBODY }), { address: HOLDER })
    expect(res.status).toBe(503)
  })
})
