import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { readUsage } from '../../../lib/billing/usage'
import { randomHex } from '../../../lib/crypto'
import { anvilAvailable } from '../../support/anvil'
import { createHarness, type Harness } from '../../support/harness'
import { startPaymentChain, type PaymentChain } from '../../support/payment-chain'
import { withinOneWindow } from '../../support/requests'
import { credential, gateway, payChallenge, pluginsEnv, setPlan, startPluginServer, type PluginServer } from './helpers'

let h: Harness
let plugins: PluginServer
let chain: PaymentChain | undefined

beforeAll(async () => {
  plugins = await startPluginServer()
  chain = anvilAvailable ? await startPaymentChain() : undefined
  // `tts` needs authentication; `stt` is free and needs it too.
  h = await createHarness({ env: { ...pluginsEnv(plugins, { tts: { auth: true }, stt: { auth: true, price: '0' } }), ...chain?.env } })
  await setPlan(h, h.users.alice, 'solo')
  await setPlan(h, h.users.bob, 'solo')
})
afterAll(async () => {
  await h.close()
  await Promise.all([plugins.close(), chain?.close()])
})
beforeEach(() => plugins.reset())

const used = async (userId: string) => (await readUsage(h.services.kv, userId, 'solo')).used

describe('gateway: authentication', () => {
  it('a plugin with auth: true refuses an anonymous call with 401 `Unauthorized`; a session passes', async () => {
    const anonymous = await gateway(h, { body: { plugin: 'tts' } })
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED', message: expect.stringContaining('needs a session or a payment proof') })
    const signedIn = await gateway(h, { user: h.users.alice, body: { plugin: 'tts' } })
    expect(signedIn.status).toBe(200)
    expect(plugins.received).toHaveLength(1)
  })

  it('with auth: true, an MPP credential is the authentication: it goes on to be checked as a payment (402, not 401)', async () => {
    const res = await gateway(h, { body: { plugin: 'tts' }, headers: { authorization: credential({ id: randomHex(32) }, `0x${randomHex(32)}`) } })
    expect(res.status).toBe(402)
    expect(await res.json()).toMatchObject({ error: 'payment_required' })
  })

  it('a free plugin with auth: true needs a session: a payment header does not stand in for one', async () => {
    const withCredential = await gateway(h, { body: { plugin: 'stt' }, headers: { authorization: credential({ id: randomHex(32) }, `0x${randomHex(32)}`) } })
    expect(withCredential.status).toBe(401)
    const withSessionHeaders = await gateway(h, { body: { plugin: 'stt' }, headers: { 'x-session-id': 's', 'x-wallet-address': '0x0' } })
    expect(withSessionHeaders.status).toBe(401)
    expect((await gateway(h, { user: h.users.bob, body: { plugin: 'stt' } })).status).toBe(200)
  })

  it('a forged or expired session cookie is no session: anonymous, so 402 (and 401 for auth plugins), nobody charged', async () => {
    const forged = { ...h.users.alice, cookie: `service-session=${randomHex(32)}` }
    const before = await used(h.users.alice.id)
    const res = await gateway(h, { user: forged })
    expect(res.status).toBe(402)
    expect(await res.json()).toMatchObject({ message: expect.stringContaining('no payment came with the call') })
    expect((await gateway(h, { user: forged, body: { plugin: 'tts' } })).status).toBe(401)
    expect(await used(h.users.alice.id)).toBe(before)
  })

  it('a page on a foreign origin cannot spend a signed-in user’s allowance: the cookie is ignored there', async () => {
    const before = await used(h.users.alice.id)
    const res = await gateway(h, { user: h.users.alice, headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(402)
    expect(await used(h.users.alice.id)).toBe(before)
    expect(plugins.received).toHaveLength(0)
  })

  it('each caller pays from their own allowance', async () => {
    const [a, b] = [await used(h.users.alice.id), await used(h.users.bob.id)]
    expect((await gateway(h, { user: h.users.bob })).status).toBe(200)
    expect(await used(h.users.bob.id)).toBe(b + 1)
    expect(await used(h.users.alice.id)).toBe(a)
  })

  it('nothing of the caller’s request but the body and Accept reaches the plugin: no cookie, no Authorization, no payment headers', async () => {
    const res = await gateway(h, {
      user: h.users.alice,
      body: { plugin: 'agent', q: 1 },
      headers: { accept: 'application/json', 'x-payment-method': 'stripe', 'x-session-id': 'sess', 'x-wallet-address': '0xabc', 'x-forwarded-for': '10.0.0.1', authorization: 'Bearer sk_live_x' },
    })
    expect(res.status).toBe(200)
    const { headers, body } = plugins.received[0]
    expect(body).toEqual({ q: 1 })
    for (const name of ['cookie', 'authorization', 'origin', 'x-payment-method', 'x-session-id', 'x-wallet-address', 'x-plugin-id', 'x-forwarded-for', 'cf-connecting-ip']) {
      expect(headers[name], name).toBeUndefined()
    }
    expect(headers.accept).toBe('application/json')
  })
})

describe('gateway: CORS for the dashboard', () => {
  it('a preflight from the dashboard allows the gateway’s headers; answers expose the payment headers; other origins get none', async () => {
    const preflight = (origin: string) =>
      h.web.request('/api/v1/gateway', {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-plugin-id,x-payment-method,authorization' },
      })
    const ok = await preflight('http://localhost:3000')
    expect(ok.status).toBe(204)
    const allowed = (ok.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',')
    expect(allowed).toEqual(expect.arrayContaining(['x-plugin-id', 'x-payment-method', 'x-session-id', 'x-wallet-address', 'authorization']))
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-headers')).toBeNull()
    const res = await gateway(h, { headers: { origin: 'http://localhost:3000' } })
    expect(res.status).toBe(402)
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(',')
    expect(exposed).toEqual(expect.arrayContaining(['www-authenticate', 'payment-receipt', 'x-session-remaining', 'x-plugin-id']))
  })
})

describe.skipIf(!anvilAvailable)('gateway: MPP replay (anvil chain 8453)', () => {
  it('one credential pays for one call: presented again it is refused', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[0])
    expect((await gateway(h, { headers: { authorization: paid.authorization } })).status).toBe(200)
    const again = await gateway(h, { headers: { authorization: paid.authorization } })
    expect(again.status).toBe(402)
    expect(await again.json()).toMatchObject({ error: 'payment_required', message: 'The challenge is unknown, expired or already used' })
    expect(plugins.received).toHaveLength(1)
  })

  it('presented five times at once, exactly one call is served', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[1])
    const answers = await Promise.all(Array.from({ length: 5 }, () => gateway(h, { headers: { authorization: paid.authorization } })))
    expect(answers.map((r) => r.status).sort()).toEqual([200, 402, 402, 402, 402])
    expect(plugins.received).toHaveLength(1)
  })

  it('a paid transaction presented with a nonce the server never issued is refused', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[2])
    const res = await gateway(h, { headers: { authorization: credential({ ...paid.params, id: randomHex(32) }, paid.hash) } })
    expect(res.status).toBe(402)
    // and the real credential still works once
    expect((await gateway(h, { headers: { authorization: paid.authorization } })).status).toBe(200)
  })
})

describe('gateway: rate limit', () => {
  it('is limited to 100 requests per minute per client address (spec "Limits")', async () => {
    await withinOneWindow(60)
    const ip = '203.0.113.200'
    const statuses: number[] = []
    // anonymous calls of the free `stt` that needs a session: refused (401) after the limiter, nothing else spent
    for (let i = 0; i < 100; i++) statuses.push((await gateway(h, { ip, body: { plugin: 'stt' } })).status)
    expect(new Set(statuses)).toEqual(new Set([401]))
    const limited = await gateway(h, { ip, body: { plugin: 'stt' } })
    expect(limited.status).toBe(429)
    expect(await limited.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(limited.headers.get('retry-after')).toBeTruthy()
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
    expect((await gateway(h, { ip: '203.0.113.201', body: { plugin: 'stt' } })).status).toBe(401)
    // an unknown plugin is refused before the limiter: it costs nothing and needs no store
    expect((await gateway(h, { ip, body: { plugin: 'nope' } })).status).toBe(400)
  })
})
