import { eq } from 'drizzle-orm'
import { generatePrivateKey } from 'viem/accounts'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { cdpClient, CdpError } from '../../../functions/wallet/cdp-client'
import { cdpAccountName } from '../../../functions/wallet/create-wallet'
import type { Config } from '../../../lib/config'
import { userWallets } from '../../../schema'
import { cdpApiKey, cdpWalletSecret, startCdpServer } from '../../support/cdp-server'
import { type Harness, useFixture, useHarness } from '../../support/harness'
import { withinOneWindow } from '../../support/requests'
import { startStripeServer, stripeEnv } from '../../support/stripe-server'
import { ADDRESS, WALLET_CREATES as CREATES, expectError, seedManagedWallet, seedWalletSignIn, silentServer, walletCall, withConfig } from './helpers'
import { closedUrl } from '../../support/loopback'

const stripe = useFixture(() => startStripeServer())
const silent = useFixture(() => silentServer())
// The RPC is down (nothing listens): every balance read fails at once.
const h = useHarness(async () => ({ env: { BASE_RPC_URL: await closedUrl(), ...stripeEnv(stripe) } }))
const bare = useHarness(async () => ({ env: { BASE_RPC_URL: await closedUrl() } }))
const hung = useHarness(() => ({ env: { BASE_RPC_URL: silent.url } }))

describe('GET /api/wallet?address', () => {
  it.each([
    ['not hex', `0x${'z'.repeat(40)}`],
    ['too short', '0x1234'],
    ['too long', `${ADDRESS}00`],
    ['no 0x', ADDRESS.slice(2)],
    ['empty', ''],
  ])('400 for an invalid address (%s)', async (_, address) => {
    const res = await walletCall(h, 'GET', `/api/wallet?address=${address}`)
    await expectError(res, 400, 'VALIDATION', /^Invalid address/)
  })

  it('500 quickly when the RPC is down, without the RPC URL', async () => {
    const started = Date.now()
    const res = await walletCall(h, 'GET', `/api/wallet?address=${ADDRESS}`)
    const body = await expectError(res, 503, 'CHAIN_UNAVAILABLE', 'Could not read balances from the chain')
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(JSON.stringify(body)).not.toContain('127.0.0.1')
  })

  it('500 within the deadline when the RPC never answers', { timeout: 20_000 }, async () => {
    const started = Date.now()
    const res = await walletCall(hung, 'GET', `/api/wallet?address=${ADDRESS}`)
    await expectError(res, 503, 'CHAIN_UNAVAILABLE')
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('own wallet with the RPC down: the wallet still answers, balance null', async () => {
    const user = await h.seedUser('Dan', `dan-${crypto.randomUUID()}@example.com`)
    await seedManagedWallet(h, user, ADDRESS)
    const res = await walletCall(h, 'GET', '/api/wallet', { user })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ hasWallet: true, address: ADDRESS, balance: null })
  })

  it('429 after 60 requests a minute from one address, with the RateLimit headers', async () => {
    await withinOneWindow(60)
    const ip = '203.0.113.77'
    for (let i = 0; i < 60; i++) {
      const res = await walletCall(h, 'GET', '/api/wallet?address=nope', { headers: { 'cf-connecting-ip': ip } })
      expect(res.status).toBe(400)
    }
    const res = await walletCall(h, 'GET', `/api/wallet?address=${ADDRESS}`, { headers: { 'cf-connecting-ip': ip } })
    await expectError(res, 429, 'RATE_LIMITED', 'Too many requests')
    expect(res.headers.get('retry-after')).toBeTruthy()
    expect(res.headers.get('ratelimit-remaining')).toBe('0')
  })
})

describe('POST /api/wallet', () => {
  it('400 INVALID_ACTION for an unknown or missing action', async () => {
    for (const body of [{ action: 'steal' }, {}, { action: 7 }]) {
      await expectError(await walletCall(h, 'POST', '/api/wallet', { user: h.users.alice, body }), 400, 'INVALID_ACTION', 'Invalid action')
    }
  })

  it('400 INVALID_JSON for a malformed body', async () => {
    await expectError(await walletCall(h, 'POST', '/api/wallet', { user: h.users.alice, body: '{nope' }), 400, 'INVALID_JSON')
  })

  it('create: 500 CDP not configured; 400 when a wallet exists', async () => {
    await expectError(await walletCall(h, 'POST', '/api/wallet', { user: h.users.alice, body: { action: 'create' } }), 500, 'MISCONFIGURED', 'CDP not configured')
    const user = await h.seedUser('Eve', `eve-${crypto.randomUUID()}@example.com`)
    await seedManagedWallet(h, user, ADDRESS)
    await expectError(await walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'create' } }), 400, 'WALLET_EXISTS', 'Wallet already exists')
  })

  it('get_seed: 404 without a wallet', async () => {
    await expectError(await walletCall(h, 'POST', '/api/wallet', { user: h.users.bob, body: { action: 'get_seed' } }), 404, 'NOT_FOUND', 'No wallet found')
  })

  it('export_seed: always 403, with or without a wallet', async () => {
    const user = await h.seedUser('Fay', `fay-${crypto.randomUUID()}@example.com`)
    await expectError(await walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'export_seed' } }), 403, 'FORBIDDEN', 'Seed export is disabled')
    await seedManagedWallet(h, user, ADDRESS)
    await expectError(await walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'export_seed' } }), 403, 'FORBIDDEN', 'Seed export is disabled')
  })
})

describe('POST /api/wallet/create and /api/wallet/cdp', () => {
  it('create: 400 without or with a malformed email', async () => {
    await expectError(await walletCall(h, 'POST', '/api/wallet/create', { user: h.users.alice, body: {} }), 400, 'VALIDATION', 'Email is required')
    await expectError(await walletCall(h, 'POST', '/api/wallet/create', { user: h.users.alice, body: { email: 'nope' } }), 400, 'VALIDATION', 'Invalid email')
  })

  it('create: 500 CDP not configured; 400 when a wallet exists', async () => {
    await expectError(await walletCall(h, 'POST', '/api/wallet/create', { user: h.users.alice, body: { email: h.users.alice.email } }), 500, 'MISCONFIGURED', 'CDP not configured')
    const user = await h.seedUser('Gus', `gus-${crypto.randomUUID()}@example.com`)
    await seedManagedWallet(h, user, ADDRESS)
    await expectError(await walletCall(h, 'POST', '/api/wallet/create', { user, body: { email: user.email } }), 400, 'WALLET_EXISTS')
  })

  it('cdp: 500 CDP not configured, with or without a key', async () => {
    await expectError(await walletCall(h, 'POST', '/api/wallet/cdp', { user: h.users.alice, body: {} }), 500, 'MISCONFIGURED', 'CDP not configured')
    const privateKey = `0x${'ab'.repeat(32)}`
    const res = await walletCall(h, 'POST', '/api/wallet/cdp', { user: h.users.alice, body: { privateKey } })
    const body = await expectError(res, 500, 'MISCONFIGURED')
    expect(JSON.stringify(body)).not.toContain('abab')
  })

  it('cdp: 400 for a malformed key, never echoed', async () => {
    const privateKey = `0x${'cd'.repeat(31)}zz`
    const body = await expectError(await walletCall(h, 'POST', '/api/wallet/cdp', { user: h.users.alice, body: { privateKey } }), 400, 'VALIDATION', 'Invalid private key')
    expect(JSON.stringify(body)).not.toContain('cdcd')
  })
})

describe('GET /api/wallet/top-up', () => {
  it.each(['1', '999', '10000', 'abc', ''])('400 for amount %j', async (amount) => {
    const res = await walletCall(h, 'GET', `/api/wallet/top-up?amount=${amount}&address=${ADDRESS}`, { user: h.users.alice })
    await expectError(res, 400, 'VALIDATION', 'amount must be one of 500, 1000, 2500, 5000 (USD cents)')
  })

  it('400 without or with an invalid address', async () => {
    await expectError(await walletCall(h, 'GET', '/api/wallet/top-up?amount=500', { user: h.users.alice }), 400, 'VALIDATION', 'address required')
    await expectError(await walletCall(h, 'GET', '/api/wallet/top-up?address=0x12', { user: h.users.alice }), 400, 'VALIDATION', /^Invalid address/)
  })

  it('503 when Stripe is not configured', async () => {
    await expectError(await walletCall(bare, 'GET', `/api/wallet/top-up?address=${ADDRESS}`, { user: bare.users.alice }), 503, 'NOT_CONFIGURED', 'Stripe not configured')
  })

  it('403 for a wallet the caller has not proven (no managed wallet, no wallet sign-in), before Stripe is asked', async () => {
    const before = stripe.requests.length
    const res = await walletCall(h, 'GET', `/api/wallet/top-up?address=${ADDRESS}`, { user: h.users.alice })
    await expectError(res, 403, 'FORBIDDEN', 'address must be your managed wallet or a wallet you signed in with')
    expect(stripe.requests.length).toBe(before)
  })

  it('500 when Stripe fails', async () => {
    await seedWalletSignIn(h, h.users.bob, ADDRESS)
    stripe.failAll(500)
    try {
      const res = await walletCall(h, 'GET', `/api/wallet/top-up?address=${ADDRESS}`, { user: h.users.bob })
      await expectError(res, 500, 'PAYMENT_PROVIDER_UNAVAILABLE', 'Payment provider unavailable')
    } finally {
      stripe.failAll(null)
    }
  })
})

describe('creating a managed wallet when CDP fails (a fake CDP API)', () => {
  const cdp = useFixture(() => startCdpServer())
  const withCdp = useHarness(() => ({ env: cdp.env }))

  const quiet = () => vi.spyOn(console, 'error').mockImplementation(() => {})
  afterEach(() => vi.restoreAllMocks())
  const storedFor = (hh: Harness, userId: string) => hh.db.select().from(userWallets).where(eq(userWallets.userId, userId))

  async function expectUnavailable(hh: Harness, error: string) {
    for (const [, path, body] of CREATES) {
      const user = await hh.seedUser('Una', `una-${crypto.randomUUID()}@example.com`)
      const res = await walletCall(hh, 'POST', path, { user, body: body(user.email) })
      await expectError(res, 503, 'WALLET_PROVIDER_UNAVAILABLE', error)
      expect(res.headers.get('retry-after')).toBe('30')
      expect(await storedFor(hh, user.id)).toEqual([])
    }
  }

  it.each([
    [500, 'internal_server_error', 'Wallet provider unavailable'],
    [503, 'service_unavailable', 'Wallet provider unavailable'],
    [429, 'rate_limit_exceeded', 'Wallet provider unavailable'],
    [400, 'invalid_request', 'Wallet provider refused the request'],
    [403, 'forbidden', 'Wallet provider refused the request'],
  ])('CDP answers %i %s: 503 `%s`, nothing stored, and the next try works', async (status, errorType, error) => {
    const logged = quiet()
    const user = await withCdp.seedUser('Ray', `ray-${crypto.randomUUID()}@example.com`)
    cdp.failNext(status, errorType)
    const res = await walletCall(withCdp, 'POST', '/api/wallet/create', { user, body: { email: user.email } })
    await expectError(res, 503, 'WALLET_PROVIDER_UNAVAILABLE', error)
    expect(await storedFor(withCdp, user.id)).toEqual([])
    // What Coinbase support asks for is logged: the status, the error type and CDP's correlation id.
    expect(JSON.parse(String(logged.mock.calls.at(-1)![0]))).toMatchObject({ event: 'wallet.cdp_failed', status, errorType, correlationId: expect.any(String) })
    const retry = await walletCall(withCdp, 'POST', '/api/wallet/create', { user, body: { email: user.email } })
    expect(retry.status).toBe(201)
  })

  it('a key or Wallet Secret CDP does not know: CDP answers 401 `unauthorized`, here 503 refused, nothing stored', async () => {
    quiet()
    for (const patch of [{ CDP_API_KEY_SECRET: cdpApiKey().secret }, { CDP_WALLET_SECRET: cdpWalletSecret().secret }]) {
      const before = cdp.requests.length
      await withConfig(withCdp, patch, () => expectUnavailable(withCdp, 'Wallet provider refused the request'))
      expect(cdp.requests.length).toBeGreaterThan(before)
      expect(cdp.requests.slice(before).every((r) => r.status === 401)).toBe(true)
    }
  })

  it('tokens past their expiry: CDP refuses them (401 unauthorized)', async () => {
    const client = await cdpClient(cdp.env as unknown as Config, { now: () => Date.now() - 5 * 60_000 })
    const failure = await client.createAccount({ name: `expired-${Date.now()}`, idempotencyKey: crypto.randomUUID() }).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(CdpError)
    expect(failure).toMatchObject({ status: 401, errorType: 'unauthorized', correlationId: expect.any(String) })
    // The same call dated now goes through.
    const fresh = await cdpClient(cdp.env as unknown as Config)
    await expect(fresh.createAccount({ name: `fresh-${Date.now()}`, idempotencyKey: crypto.randomUUID() })).resolves.toMatchObject({ address: expect.any(String) })
  })

  it('no Wallet Secret, or credentials that do not import: 503 NOT_CONFIGURED, nothing sent to CDP', async () => {
    quiet()
    const before = cdp.requests.length
    const create = () => walletCall(withCdp, 'POST', '/api/wallet', { user: withCdp.users.alice, body: { action: 'create' } })
    await expectError(await withConfig(withCdp, { CDP_WALLET_SECRET: undefined }, create), 503, 'NOT_CONFIGURED', 'CDP wallet secret not configured')
    for (const patch of [{ CDP_API_KEY_SECRET: 'not-a-key' }, { CDP_API_KEY_SECRET: `-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----` }, { CDP_WALLET_SECRET: 'bm90IGEga2V5' }]) {
      await expectError(await withConfig(withCdp, patch, create), 503, 'NOT_CONFIGURED', 'CDP credentials are not usable')
    }
    const importing = () => walletCall(withCdp, 'POST', '/api/wallet/cdp', { user: withCdp.users.alice, body: { privateKey: generatePrivateKey() } })
    await expectError(await withConfig(withCdp, { CDP_IMPORT_PUBLIC_KEY: 'not a pem' }, importing), 503, 'NOT_CONFIGURED', 'CDP credentials are not usable')
    expect(cdp.requests.length).toBe(before)
  })

  it('a second wallet: 400 WALLET_EXISTS from every route, and CDP is not called again', async () => {
    const user = await withCdp.seedUser('Sol', `sol-${crypto.randomUUID()}@example.com`)
    expect((await walletCall(withCdp, 'POST', '/api/wallet/create', { user, body: { email: user.email } })).status).toBe(201)
    const before = cdp.requests.length
    for (const [, path, body] of CREATES) {
      await expectError(await walletCall(withCdp, 'POST', path, { user, body: body(user.email) }), 400, 'WALLET_EXISTS', 'Wallet already exists')
    }
    expect(cdp.requests.length).toBe(before)
    expect(await storedFor(withCdp, user.id)).toHaveLength(1)
  })

  it.each([
    ['zero', `0x${'0'.repeat(64)}`],
    ['the curve order', '0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141'],
    ['above the curve order', `0x${'f'.repeat(64)}`],
    ['63 hex digits', `0x${'1'.repeat(63)}`],
    ['not a string', 42],
  ])('import: 400 `Invalid private key` for %s, without reaching CDP', async (_, privateKey) => {
    const before = cdp.requests.length
    const res = await walletCall(withCdp, 'POST', '/api/wallet/cdp', { user: withCdp.users.bob, body: { privateKey } })
    await expectError(res, 400, 'VALIDATION', typeof privateKey === 'string' ? 'Invalid private key' : undefined)
    expect(cdp.requests.length).toBe(before)
  })

  it('import of a key whose account CDP holds for another user: 503 refused, nothing stored', async () => {
    quiet()
    const privateKey = generatePrivateKey()
    const first = await withCdp.seedUser('Kim', `kim-${crypto.randomUUID()}@example.com`)
    expect((await walletCall(withCdp, 'POST', '/api/wallet/cdp', { user: first, body: { privateKey } })).status).toBe(201)
    const second = await withCdp.seedUser('Lee', `lee-${crypto.randomUUID()}@example.com`)
    const res = await walletCall(withCdp, 'POST', '/api/wallet/cdp', { user: second, body: { privateKey } })
    await expectError(res, 503, 'WALLET_PROVIDER_UNAVAILABLE', 'Wallet provider refused the request')
    expect(await storedFor(withCdp, second.id)).toEqual([])
  })

  it('import when CDP already holds the user’s account under another key (a lost create): that account is stored, 400', async () => {
    quiet()
    const user = await withCdp.seedUser('Moe', `moe-${crypto.randomUUID()}@example.com`)
    cdp.dropNextAnswer()
    expect((await walletCall(withCdp, 'POST', '/api/wallet/create', { user, body: { email: user.email } })).status).toBe(503)
    const created = cdp.accounts.at(-1)!
    const res = await walletCall(withCdp, 'POST', '/api/wallet/cdp', { user, body: { privateKey: generatePrivateKey() } })
    await expectError(res, 400, 'WALLET_EXISTS')
    const seed = await walletCall(withCdp, 'POST', '/api/wallet', { user, body: { action: 'get_seed' } })
    expect(await seed.json()).toMatchObject({ address: created.address, walletId: await cdpAccountName(user.id) })
  })

  it('get_seed with CDP configured but no wallet yet: 404', async () => {
    await expectError(await walletCall(withCdp, 'POST', '/api/wallet', { user: withCdp.users.admin, body: { action: 'get_seed' } }), 404, 'NOT_FOUND', 'No wallet found')
  })

  it('the fake refuses a reused idempotency key on another request (409 idempotency_error), as CDP does', async () => {
    const client = await cdpClient(cdp.env as unknown as Config)
    const idempotencyKey = crypto.randomUUID()
    await client.createAccount({ name: `idem-a-${Date.now()}`, idempotencyKey })
    const failure = await client.createAccount({ name: `idem-b-${Date.now()}`, idempotencyKey }).catch((e: unknown) => e)
    expect(failure).toMatchObject({ status: 409, errorType: 'idempotency_error' })
  })
})
