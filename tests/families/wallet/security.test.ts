import { generatePrivateKey } from 'viem/accounts'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { bearerToken, importApiKey, importWalletSecret, requestHash, walletAuthToken } from '../../../functions/wallet/cdp-auth'
import { userWallets } from '../../../schema'
import { cdpApiKey, startCdpServer } from '../../support/cdp-server'
import { type SeededUser, useFixture, useHarness } from '../../support/harness'
import { ADDRESS, expectError, seedManagedWallet, seedWalletSignIn, walletCall, withConfig } from './helpers'
import { startStripeServer, stripeEnv } from '../../support/stripe-server'
import { closedUrl } from '../../support/loopback'

const h = useHarness(async () => ({ env: { BASE_RPC_URL: await closedUrl() } }))
beforeAll(async () => {
  // Alice has a managed wallet and a wallet sign-in; bob has neither.
  await seedManagedWallet(h, h.users.alice, ADDRESS, 'alice-wallet-id')
  await seedWalletSignIn(h, h.users.alice, '0x1111111111111111111111111111111111111111')
})

const SIGNED_IN: Array<[string, string, unknown?]> = [
  ['GET', '/api/wallet'],
  ['POST', '/api/wallet', { action: 'get_seed' }],
  ['GET', '/api/wallet/address'],
  ['POST', '/api/wallet/create', { email: 'x@example.com' }],
  ['GET', '/api/wallet/cdp'],
  ['POST', '/api/wallet/cdp', {}],
  ['GET', `/api/wallet/top-up?address=${ADDRESS}`],
  ['GET', '/api/wallet/top-ups'],
]

describe('sessions', () => {
  it.each(SIGNED_IN)('%s %s: 401 without a session', async (method, path, body) => {
    await expectError(await walletCall(h, method, path, { body }), 401, 'UNAUTHORIZED', 'Unauthorized')
  })

  it.each(SIGNED_IN)('%s %s: 401 with a forged session cookie', async (method, path, body) => {
    const res = await walletCall(h, method, path, { body, headers: { cookie: `service-session=${'f'.repeat(64)}` } })
    await expectError(res, 401, 'UNAUTHORIZED')
  })

  it.each(SIGNED_IN.filter(([m]) => m === 'POST'))('%s %s: 403 from a foreign origin', async (method, path, body) => {
    const res = await walletCall(h, method, path, { user: h.users.alice, body, headers: { origin: 'https://evil.example' } })
    await expectError(res, 403, 'ORIGIN_NOT_ALLOWED')
  })

  it('the balance query needs no session (and a cookie changes nothing)', async () => {
    const res = await walletCall(h, 'GET', `/api/wallet?address=${ADDRESS}`)
    await expectError(res, 503, 'CHAIN_UNAVAILABLE') // reached the chain: no 401 on the way
  })
})

describe("another user's wallet is never shown", () => {
  it('GET /api/wallet as bob: no wallet', async () => {
    const res = await walletCall(h, 'GET', '/api/wallet', { user: h.users.bob })
    expect(await res.json()).toEqual({ hasWallet: false, message: expect.any(String) })
  })

  it('get_seed as bob: 404; create as bob is not blocked by alice’s wallet', async () => {
    await expectError(await walletCall(h, 'POST', '/api/wallet', { user: h.users.bob, body: { action: 'get_seed' } }), 404, 'NOT_FOUND')
    await expectError(await walletCall(h, 'POST', '/api/wallet', { user: h.users.bob, body: { action: 'create' } }), 500, 'MISCONFIGURED')
  })

  it('GET /api/wallet/address as bob: null, not alice’s managed or sign-in wallet', async () => {
    const res = await walletCall(h, 'GET', '/api/wallet/address', { user: h.users.bob })
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({ address: null, source: null })
    expect(text.toLowerCase()).not.toContain(ADDRESS.toLowerCase())
    expect(text).not.toContain('1111111111')
  })

  it('alice sees her own, and never a secret', async () => {
    const res = await walletCall(h, 'POST', '/api/wallet', { user: h.users.alice, body: { action: 'get_seed' } })
    const body = await res.json()
    expect(body).toMatchObject({ address: ADDRESS, walletId: 'alice-wallet-id', exportable: false })
    expect(Object.keys(body).sort()).toEqual(['address', 'createdAt', 'custody', 'exportable', 'hasWallet', 'network', 'walletId'])
  })

  it('the database refuses a cross-user read as the user (RLS)', async () => {
    const rows = await h.services.reader.asUser(h.users.bob.id, (db) => db.select().from(userWallets))
    expect(rows).toEqual([])
  })
})

describe('managed wallets through CDP: keys and other users', () => {
  const cdp = useFixture(() => startCdpServer())
  // Request logging on: the request line must not carry the key either.
  const c = useHarness(() => ({ env: { ...cdp.env, LOG_REQUESTS: '1' } }))
  afterEach(() => vi.restoreAllMocks())

  /** Everything written to the console while `fn` runs, as one text. */
  async function consoleDuring(fn: () => Promise<unknown>) {
    const lines: string[] = []
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')))
    }
    await fn()
    vi.restoreAllMocks()
    return lines.join('\n')
  }

  it('an imported private key is never logged, stored or answered: on success, on CDP failure, on a refusal', async () => {
    const privateKey = generatePrivateKey()
    const hex = privateKey.slice(2)
    const answers: string[] = []
    const importAs = async (user: SeededUser) => {
      const res = await walletCall(c, 'POST', '/api/wallet/cdp', { user, body: { privateKey } })
      answers.push(await res.text())
      return res.status
    }
    const logged = await consoleDuring(async () => {
      const unlucky = await c.seedUser('Pat', `pat-${crypto.randomUUID()}@example.com`)
      cdp.failNext(500, 'internal_server_error')
      expect(await importAs(unlucky)).toBe(503)
      expect(await withConfig(c, { CDP_API_URL: await closedUrl() }, () => importAs(unlucky))).toBe(503)
      expect(await importAs(unlucky)).toBe(201)
      expect(await importAs(c.users.bob)).toBe(503) // CDP holds this key's account for another user
    })
    expect(logged).toContain('wallet.cdp_failed')
    for (const text of [logged, ...answers, JSON.stringify(await c.db.select().from(userWallets)), ...cdp.requests.map((r) => r.body)]) {
      expect(text.toLowerCase()).not.toContain(hex)
    }
  })

  it('another user’s managed wallet is never shown, and never blocks theirs', async () => {
    const { alice, bob } = c.users
    const created = await walletCall(c, 'POST', '/api/wallet', { user: alice, body: { action: 'create' } })
    expect(created.status).toBe(201)
    const { walletAddress } = await created.json()
    await expectError(await walletCall(c, 'POST', '/api/wallet', { user: c.users.admin, body: { action: 'get_seed' } }), 404, 'NOT_FOUND')
    const address = await walletCall(c, 'GET', '/api/wallet/address', { user: c.users.admin })
    expect((await address.text()).toLowerCase()).not.toContain(walletAddress.toLowerCase())
    // Bob (who holds no wallet after the refused import above) makes his own, another account.
    const his = await walletCall(c, 'POST', '/api/wallet/create', { user: bob, body: { email: bob.email } })
    expect(his.status).toBe(201)
    expect((await his.json()).walletAddress).not.toBe(walletAddress)
    const seed = await walletCall(c, 'POST', '/api/wallet', { user: alice, body: { action: 'get_seed' } })
    expect((await seed.json()).address).toBe(walletAddress)
  })
})

describe('CDP request signing, as the fake CDP checks it (forged credentials are refused)', () => {
  const cdp = useFixture(() => startCdpServer())
  const path = '/platform/v2/evm/accounts'

  /** A create request to the fake, signed by this app's signer unless `forge` changes a part. */
  async function send(forge: { bearerPath?: string; bearerKey?: string; hashedBody?: Record<string, unknown>; walletAuth?: string | null } = {}) {
    const body = { name: `forge-${crypto.randomUUID().slice(0, 8)}` }
    const host = new URL(cdp.url).host
    const now = Date.now()
    const apiKey = await importApiKey(forge.bearerKey ?? cdp.env.CDP_API_KEY_SECRET)
    const walletKey = await importWalletSecret(cdp.env.CDP_WALLET_SECRET)
    const headers: Record<string, string> = {
      authorization: `Bearer ${await bearerToken(cdp.env.CDP_API_KEY_ID, apiKey, { method: 'POST', host, path: forge.bearerPath ?? path, now })}`,
      'content-type': 'application/json',
    }
    const walletAuth = forge.walletAuth === undefined ? await walletAuthToken(walletKey, { method: 'POST', host, path, body: forge.hashedBody ?? body, now }) : forge.walletAuth
    if (walletAuth !== null) headers['x-wallet-auth'] = walletAuth
    const res = await fetch(`${cdp.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
    return { res, walletAuth: headers['x-wallet-auth'], body }
  }

  async function expectUnauthorized(res: Response) {
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({
      errorType: 'unauthorized',
      errorMessage: expect.any(String),
      correlationId: expect.any(String),
      errorLink: 'https://docs.cdp.coinbase.com/api-reference/v2/errors#unauthorized',
    })
  }

  it('signed properly: accepted', async () => {
    expect((await send()).res.status).toBe(201)
  })

  it('a Bearer token naming another path: 401', async () => {
    await expectUnauthorized((await send({ bearerPath: `${path}/import` })).res)
  })

  it('a Bearer token signed by a key CDP does not know: 401', async () => {
    await expectUnauthorized((await send({ bearerKey: cdpApiKey().secret })).res)
  })

  it('a wallet token whose reqHash covers another body (a tampered body): 401', async () => {
    await expectUnauthorized((await send({ hashedBody: { name: 'someone-else' } })).res)
  })

  it('no X-Wallet-Auth on an account write: 401', async () => {
    await expectUnauthorized((await send({ walletAuth: null })).res)
  })

  it('a wallet token replayed (its jti already used): 401', async () => {
    const first = await send()
    expect(first.res.status).toBe(201)
    await expectUnauthorized((await send({ walletAuth: first.walletAuth })).res)
  })

  it('reqHash is over the body with its keys sorted, at every depth', async () => {
    expect(await requestHash({ b: 1, a: { d: [{ f: 1, e: 2 }], c: 3 } })).toBe(await requestHash({ a: { c: 3, d: [{ e: 2, f: 1 }] }, b: 1 }))
  })
})

describe('top-ups go only to a wallet the caller has proven', () => {
  const stripe = useFixture(() => startStripeServer())
  const paying = useHarness(() => ({ env: stripeEnv(stripe) }))

  it("bob cannot top up alice's managed wallet or the wallet she signed in with: 403, no checkout made", async () => {
    await seedManagedWallet(paying, paying.users.alice, ADDRESS, 'alice-wallet-id')
    await seedWalletSignIn(paying, paying.users.alice, '0x1111111111111111111111111111111111111111')
    for (const address of [ADDRESS, ADDRESS.toLowerCase(), '0x1111111111111111111111111111111111111111']) {
      const res = await walletCall(paying, 'GET', `/api/wallet/top-up?address=${address}`, { user: paying.users.bob })
      await expectError(res, 403, 'FORBIDDEN')
    }
    expect(stripe.sessions).toHaveLength(0)
    // Alice can, for both.
    for (const address of [ADDRESS, '0x1111111111111111111111111111111111111111']) {
      expect((await walletCall(paying, 'GET', `/api/wallet/top-up?address=${address}`, { user: paying.users.alice })).status).toBe(200)
    }
    expect(stripe.sessions.map((s) => s.metadata.userId)).toEqual([paying.users.alice.id, paying.users.alice.id])
  })
})
