import { beforeAll, describe, expect, it } from 'vitest'
import { userWallets } from '../../../schema'
import { useHarness } from '../../support/harness'
import { ADDRESS, expectError, seedManagedWallet, seedWalletSignIn, walletCall } from './helpers'
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
