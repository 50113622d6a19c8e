import { describe, expect, it } from 'vitest'
import { useFixture, useHarness } from '../../support/harness'
import { withinOneWindow } from '../../support/requests'
import { startStripeServer, stripeEnv } from '../../support/stripe-server'
import { ADDRESS, expectError, seedManagedWallet, silentServer, walletCall } from './helpers'
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

  it('500 when Stripe fails', async () => {
    stripe.failAll(500)
    try {
      const res = await walletCall(h, 'GET', `/api/wallet/top-up?address=${ADDRESS}`, { user: h.users.bob })
      await expectError(res, 500, 'PAYMENT_PROVIDER_UNAVAILABLE', 'Payment provider unavailable')
    } finally {
      stripe.failAll(null)
    }
  })
})
