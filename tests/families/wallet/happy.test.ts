import { describe, expect, it } from 'vitest'
import { getAddress, parseEther } from 'viem'
import { anvilAvailable, anvilClients } from '../../support/anvil'
import { eq } from 'drizzle-orm'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { cdpAccountName, cdpIdempotencyKey } from '../../../functions/wallet/create-wallet'
import { userWallets } from '../../../schema'
import { startCdpServer } from '../../support/cdp-server'
import { createHarness, useFixture, useHarness } from '../../support/harness'
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

})

describe('wallet: card top-up of a proven wallet', () => {
  const stripe = useFixture(() => startStripeServer())
  const h = useHarness(() => ({ env: stripeEnv(stripe) }))

  it('top-up of a wallet signed in with: a USD card checkout for the amount, the wallet in its metadata', async () => {
    const { bob } = h.users
    const address = privateKeyToAddress(generatePrivateKey())
    await seedWalletSignIn(h, bob, address)
    const res = await walletCall(h, 'GET', `/api/wallet/top-up?amount=2500&address=${address.toLowerCase()}`, { user: bob })
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(200)
    expect(res.headers.get('ratelimit-limit')).toBe('10')
    expect(body).toEqual({ url: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\//), amount: 2500, address })
    const session = stripe.sessions.at(-1)!
    expect(session).toMatchObject({ mode: 'payment', amount_total: 2500, currency: 'usd', client_reference_id: bob.id, customer_email: bob.email })
    expect(session.metadata).toEqual({ kind: 'wallet-top-up', userId: bob.id, address, amountCents: '2500' })
  })

  it('top-up of the managed wallet (any case): amount defaults to 1000 cents; nothing is funded before payment', async () => {
    const { alice } = h.users
    const address = privateKeyToAddress(generatePrivateKey())
    await seedManagedWallet(h, alice, address)
    const res = await walletCall(h, 'GET', `/api/wallet/top-up?address=${address.toLowerCase()}`, { user: alice })
    expect(res.status).toBe(200)
    expect((await res.json()).amount).toBe(1000)
    expect(stripe.sessions.at(-1)!.amount_total).toBe(1000)
    const listed = await walletCall(h, 'GET', '/api/wallet/top-ups', { user: alice })
    expect(listed.status).toBe(200)
    expect(listed.headers.get('cache-control')).toBe('no-store')
    expect(await listed.json()).toEqual({ balances: [], topUps: [] })
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
})

describe('managed wallets through CDP (a fake CDP API checking its authentication)', () => {
  const cdp = useFixture(() => startCdpServer())
  const h = useHarness(() => ({ env: cdp.env }))
  const writes = () => cdp.requests.filter((r) => r.method === 'POST')

  it('POST /api/wallet/create: a new CDP account, stored as the caller’s wallet', async () => {
    const user = await h.seedUser('Cleo', `cleo-${crypto.randomUUID()}@example.com`)
    const res = await walletCall(h, 'POST', '/api/wallet/create', { user, body: { email: user.email } })
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(201)
    const name = await cdpAccountName(user.id)
    const account = cdp.accounts.find((a) => a.name === name)!
    expect(body).toEqual({ success: true, walletAddress: account.address, walletId: name, networks: ['base'] })
    expect(name).toMatch(/^u-[0-9a-f]{32}$/)
    // Signed as CDP documents: both tokens checked by the fake, an idempotency key derived from the user.
    const sent = writes().at(-1)!
    expect(sent).toMatchObject({ path: '/platform/v2/evm/accounts', status: 201 })
    expect(JSON.parse(sent.body)).toEqual({ name })
    expect(sent.headers['x-idempotency-key']).toBe(await cdpIdempotencyKey('create-account', user.id))
    expect(sent.headers['x-wallet-auth']).toEqual(expect.any(String))

    const seed = await walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'get_seed' } })
    expect(await seed.json()).toEqual({ hasWallet: true, address: account.address, walletId: name, network: 'base', createdAt: account.createdAt, custody: 'cdp', exportable: false })
    const address = await walletCall(h, 'GET', '/api/wallet/address', { user })
    expect(await address.json()).toEqual({ authenticated: true, address: account.address, network: 'base', type: 'cdp', source: 'managed' })
  })

  it('POST /api/wallet {action: create} and POST /api/wallet/cdp {} make one the same way', async () => {
    const a = await h.seedUser('Abe', `abe-${crypto.randomUUID()}@example.com`)
    const res = await walletCall(h, 'POST', '/api/wallet', { user: a, body: { action: 'create' } })
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(201)
    expect(body).toEqual({ success: true, walletAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), walletId: await cdpAccountName(a.id), networks: ['base'] })

    const b = await h.seedUser('Bea', `bea-${crypto.randomUUID()}@example.com`)
    const viaCdp = await walletCall(h, 'POST', '/api/wallet/cdp', { user: b, body: {} })
    expect(viaCdp.status).toBe(201)
    const created = await viaCdp.json()
    expect(created).toEqual({ success: true, address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), network: 'base' })
    expect(cdp.accounts.find((x) => x.address === created.address)?.name).toBe(await cdpAccountName(b.id))
  })

  it('POST /api/wallet/cdp {privateKey}: that key’s account imported, the key sent only encrypted', async () => {
    const user = await h.seedUser('Ida', `ida-${crypto.randomUUID()}@example.com`)
    const privateKey = generatePrivateKey()
    const res = await walletCall(h, 'POST', '/api/wallet/cdp', { user, body: { privateKey: privateKey.slice(2).toUpperCase() } })
    const text = await res.text()
    expect(res.status, text).toBe(201)
    const address = privateKeyToAddress(privateKey)
    expect(JSON.parse(text)).toEqual({ success: true, address, network: 'base' })
    expect(cdp.accounts.find((a) => a.address === address)).toMatchObject({ imported: true, name: await cdpAccountName(user.id) })
    const sent = writes().at(-1)!
    expect(sent.path).toBe('/platform/v2/evm/accounts/import')
    expect(Object.keys(JSON.parse(sent.body)).sort()).toEqual(['encryptedPrivateKey', 'name'])
    expect(sent.body.toLowerCase()).not.toContain(privateKey.slice(2))
    expect(text.toLowerCase()).not.toContain(privateKey.slice(2))
  })

  it('a create whose answer was lost: the retry replays it (same idempotency key), one account', async () => {
    const user = await h.seedUser('Lou', `lou-${crypto.randomUUID()}@example.com`)
    const name = await cdpAccountName(user.id)
    cdp.dropNextAnswer()
    const lost = await walletCall(h, 'POST', '/api/wallet/create', { user, body: { email: user.email } })
    expect(lost.status).toBe(503)
    expect(cdp.accounts.filter((a) => a.name === name)).toHaveLength(1) // made, but the app never heard
    expect(await h.db.select().from(userWallets).where(eq(userWallets.userId, user.id))).toEqual([])

    const retry = await walletCall(h, 'POST', '/api/wallet/create', { user, body: { email: user.email } })
    expect(retry.status).toBe(201)
    expect((await retry.json()).walletAddress).toBe(cdp.accounts.find((a) => a.name === name)!.address)
    expect(cdp.accounts.filter((a) => a.name === name)).toHaveLength(1)
  })

  it('past the idempotency window: CDP refuses the name, the account is read back by name and stored', async () => {
    const user = await h.seedUser('Max', `max-${crypto.randomUUID()}@example.com`)
    const name = await cdpAccountName(user.id)
    cdp.dropNextAnswer()
    expect((await walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'create' } })).status).toBe(503)
    cdp.forgetIdempotency()
    const retry = await walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'create' } })
    expect(retry.status).toBe(201)
    expect((await retry.json()).walletAddress).toBe(cdp.accounts.find((a) => a.name === name)!.address)
    expect(cdp.requests.at(-2)).toMatchObject({ method: 'POST', status: 409 })
    expect(cdp.requests.at(-1)).toMatchObject({ method: 'GET', path: `/platform/v2/evm/accounts/by-name/${name}`, status: 200 })
    expect(cdp.accounts.filter((a) => a.name === name)).toHaveLength(1)
  })

  it('an import whose answer was lost: the retry stores the account CDP holds under the user’s name, imports nothing', async () => {
    const user = await h.seedUser('Ned', `ned-${crypto.randomUUID()}@example.com`)
    const privateKey = generatePrivateKey()
    cdp.dropNextAnswer()
    expect((await walletCall(h, 'POST', '/api/wallet/cdp', { user, body: { privateKey } })).status).toBe(503)
    const retry = await walletCall(h, 'POST', '/api/wallet/cdp', { user, body: { privateKey } })
    expect(retry.status).toBe(400)
    expect((await retry.json()).code).toBe('WALLET_EXISTS')
    const seed = await walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'get_seed' } })
    expect(await seed.json()).toMatchObject({ address: privateKeyToAddress(privateKey), walletId: await cdpAccountName(user.id) })
    expect(cdp.accounts.filter((a) => a.address === privateKeyToAddress(privateKey))).toHaveLength(1)
  })

  it('one wallet per user under concurrency: 10 parallel creates make one CDP account and store one wallet', async () => {
    const user = await h.seedUser('Zed', `zed-${crypto.randomUUID()}@example.com`)
    const before = writes().length
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 ? walletCall(h, 'POST', '/api/wallet', { user, body: { action: 'create' } }) : walletCall(h, 'POST', '/api/wallet/create', { user, body: { email: user.email } }),
      ),
    )
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses).toEqual([201, 400, 400, 400, 400, 400, 400, 400, 400, 400])
    for (const res of answers.filter((r) => r.status === 400)) expect((await res.json()).code).toBe('WALLET_EXISTS')
    expect(writes().length - before).toBe(1)
    const name = await cdpAccountName(user.id)
    expect(cdp.accounts.filter((a) => a.name === name)).toHaveLength(1)
    expect(await h.db.select().from(userWallets).where(eq(userWallets.userId, user.id))).toHaveLength(1)
  })

  it('an EC (ES256) API key signs as well as an Ed25519 one', async () => {
    const ec = await startCdpServer({ keyType: 'ec' })
    const other = await createHarness({ env: ec.env })
    try {
      const res = await walletCall(other, 'POST', '/api/wallet/create', { user: other.users.alice, body: { email: other.users.alice.email } })
      expect(res.status).toBe(201)
      expect(ec.accounts).toHaveLength(1)
      expect(ec.env.CDP_API_KEY_SECRET).toMatch(/^-----BEGIN EC PRIVATE KEY-----/)
    } finally {
      await other.close()
      await ec.close()
    }
  })
})
