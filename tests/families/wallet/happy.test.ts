import { describe, expect, it } from 'vitest'
import { getAddress, parseEther } from 'viem'
import { anvilAvailable, anvilClients } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import { startPaymentChain } from '../../support/payment-chain'
import { startStripeServer, stripeEnv } from '../../support/stripe-server'
import { CDP_ENV, seedManagedWallet, seedWalletSignIn, walletCall } from './helpers'

describe.skipIf(!anvilAvailable)('wallet: balances, own wallet, top-up (anvil chain 8453)', () => {
  // A chain with a deployed token and funded wallets: minutes on a loaded 2-core machine.
  const chain = useFixture(() => startPaymentChain(), { timeout: 180_000 })
  const stripe = useFixture(() => startStripeServer())
  const h = useHarness(() => ({ env: { ...chain.env, ...stripeEnv(stripe) } }))

  const balances = async (address: string) => {
    const res = await walletCall(h, 'GET', `/api/wallet?address=${address}`)
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(200)
    return { res, body }
  }

  it('an empty address: both assets at zero, allTokens empty, basescan links', async () => {
    const address = '0x000000000000000000000000000000000000dEaD'
    const { res, body } = await balances(address.toLowerCase())
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('ratelimit-limit')).toBe('60')
    const usdc = getAddress(chain.usdc)
    expect(body).toEqual({
      address,
      chain: 'base',
      chainId: 8453,
      testnet: false,
      explorerUrl: `https://basescan.org/address/${address}`,
      nativeBalance: '0',
      primaryToken: { address: usdc, name: 'USD Coin', symbol: 'USDC', decimals: 6, balance: '0', balanceRaw: '0', explorerUrl: `https://basescan.org/token/${usdc}?a=${address}` },
      allTokens: [],
      assets: [
        { address: 'native', name: 'Ether', symbol: 'ETH', decimals: 18, balance: '0', balanceRaw: '0', explorerUrl: `https://basescan.org/address/${address}` },
        body.primaryToken,
      ],
    })
  })

  it('a funded wallet: formatted and raw balances, ETH then USDC in allTokens', async () => {
    const payer = chain.payers[0].address
    const { body } = await balances(payer)
    expect(body.primaryToken).toMatchObject({ balance: '1000', balanceRaw: '1000000000' })
    expect(body.assets.map((a: { symbol: string }) => a.symbol)).toEqual(['ETH', 'USDC'])
    expect(body.allTokens.map((a: { symbol: string }) => a.symbol)).toEqual(['ETH', 'USDC'])
    expect(Number(body.nativeBalance)).toBeGreaterThan(0)
    expect(body.assets[0].balance).toBe(body.nativeBalance)
  })

  it('only ETH: allTokens leaves out the zero USDC, fractions are formatted exactly', async () => {
    const fresh = getAddress('0x00000000000000000000000000000000000be5e1')
    const { client, wallet } = anvilClients(chain.anvil)
    await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: fresh, value: parseEther('1.25') }) })
    const { body } = await balances(fresh)
    expect(body.nativeBalance).toBe('1.25')
    expect(body.assets[0]).toMatchObject({ balance: '1.25', balanceRaw: '1250000000000000000' })
    expect(body.allTokens).toEqual([body.assets[0]])
  })

  it('your own wallet: none yet, then the managed wallet with its USDC balance', async () => {
    const { alice } = h.users
    let res = await walletCall(h, 'GET', '/api/wallet', { user: alice })
    expect(await res.json()).toEqual({ hasWallet: false, message: expect.any(String) })
    const address = chain.payers[1].address
    await seedManagedWallet(h, alice, address.toLowerCase())
    res = await walletCall(h, 'GET', '/api/wallet', { user: alice })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ hasWallet: true, address, balance: '1000', network: 'base', createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
  })

  it('get_seed answers metadata only; the address route prefers the managed wallet', async () => {
    const user = await h.seedUser('Carol', `carol-${crypto.randomUUID()}@example.com`)
    const address = chain.payers[2].address
    const walletId = await seedManagedWallet(h, user, address)
    await seedWalletSignIn(h, user, chain.payers[3].address)
    const res = await walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'get_seed' } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ hasWallet: true, address, walletId, network: 'base', createdAt: expect.any(String), custody: 'cdp', exportable: false })
    const addr = await walletCall(h, 'GET', '/api/wallet/address', { user })
    expect(await addr.json()).toEqual({ authenticated: true, address, network: 'base', type: 'cdp', source: 'managed' })
  })

  it('the address route: the signed-in wallet, else null with a message', async () => {
    const { bob, admin } = h.users
    await seedWalletSignIn(h, bob, chain.payers[4].address)
    let res = await walletCall(h, 'GET', '/api/wallet/address', { user: bob })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ authenticated: true, address: chain.payers[4].address, network: 'base', type: 'external', source: 'session' })
    res = await walletCall(h, 'GET', '/api/wallet/address', { user: admin })
    expect(await res.json()).toEqual({ authenticated: true, address: null, message: expect.any(String), network: 'base', type: null, source: null })
  })

  it('cdp status without CDP: not_configured', async () => {
    const res = await walletCall(h, 'GET', '/api/wallet/cdp', { user: h.users.bob })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'not_configured', type: 'cdp', supportedChains: ['base'] })
  })

  it('top-up: a USD card checkout for the amount, the wallet in its metadata', async () => {
    const { bob } = h.users
    const address = chain.payers[5].address
    const res = await walletCall(h, 'GET', `/api/wallet/top-up?amount=2500&address=${address.toLowerCase()}`, { user: bob })
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(200)
    expect(res.headers.get('ratelimit-limit')).toBe('10')
    expect(body).toEqual({ url: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\//), amount: 2500, address })
    const session = stripe.sessions.at(-1)!
    expect(session).toMatchObject({ mode: 'payment', amount_total: 2500, currency: 'usd', client_reference_id: bob.id, customer_email: bob.email })
    expect(session.metadata).toEqual({ kind: 'wallet-top-up', userId: bob.id, address, amountCents: '2500' })
  })

  it('top-up: amount defaults to 1000 cents', async () => {
    const res = await walletCall(h, 'GET', `/api/wallet/top-up?address=${chain.payers[5].address}`, { user: h.users.alice })
    expect(res.status).toBe(200)
    expect((await res.json()).amount).toBe(1000)
    expect(stripe.sessions.at(-1)!.amount_total).toBe(1000)
  })
})

describe('wallet with CDP configured', () => {
  const h = useHarness({ env: CDP_ENV })

  it('GET /api/wallet without address: the agentic wallet info, no session needed', async () => {
    const res = await walletCall(h, 'GET', '/api/wallet')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      agenticWallet: { status: 'configured', projectId: 'proj-test', features: ['managed-wallet', 'balances', 'card-top-up'] },
      instructions: expect.stringContaining('POST /api/wallet'),
    })
  })

  it('cdp status: configured, and nothing of the key shown', async () => {
    const res = await walletCall(h, 'GET', '/api/wallet/cdp', { user: h.users.alice })
    const text = await res.text()
    expect(JSON.parse(text)).toEqual({ status: 'configured', type: 'cdp', supportedChains: ['base'] })
    expect(text).not.toContain(CDP_ENV.CDP_API_KEY_SECRET)
  })

  it('creating a wallet is refused honestly (503), by every route, and nothing is stored', async () => {
    const { alice } = h.users
    for (const [path, body] of [
      ['/api/wallet', { action: 'create' }],
      ['/api/wallet/create', { email: alice.email }],
      ['/api/wallet/cdp', {}],
    ] as const) {
      const res = await walletCall(h, 'POST', path, { user: alice, body })
      expect(res.status, path).toBe(503)
      expect(await res.json()).toEqual({ error: 'CDP wallet creation is not available yet', code: 'NOT_IMPLEMENTED' })
    }
    const res = await walletCall(h, 'POST', '/api/wallet', { user: alice, body: { action: 'get_seed' } })
    expect(res.status).toBe(404)
  })
})
