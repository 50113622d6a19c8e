import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { getAddress } from 'viem'
import { chainPayments } from '../../../schema'
import { anvilAvailable } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import { startPaymentChain } from '../../support/payment-chain'
import { PaymentSessionClient, postOpen, sessionHeaders, signVoucher, units } from '../../support/payment-session'
import { charge, chargeApp, PRICE, readSession, stored, type ChargeApp } from './helpers'

let app: ChargeApp
// A chain with deployed tokens and funded wallets, then a harness: minutes on a loaded 2-core machine.
const chain = useFixture(() => startPaymentChain(), { timeout: 180_000 })
const h = useHarness(() => ({ env: chain.env }))
beforeAll(() => {
  app = chargeApp(h)
})

describe.skipIf(!anvilAvailable)('payment sessions: open and read', () => {
  it('a verified deposit opens a session: 201 with the balance in USD and how to sign vouchers', async () => {
    const wallet = chain.payers[0]
    const txHash = await chain.pay(wallet, { amount: '5' })
    const res = await postOpen(h.web, { walletAddress: wallet.address.toLowerCase(), txHash }, wallet)
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('ratelimit-limit')).toBe('10')
    const body = await res.json()
    expect(body).toEqual({
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      walletAddress: getAddress(wallet.address),
      deposit: '5',
      spent: '0',
      remaining: '5',
      currency: 'USDC',
      chainId: 8453,
      token: getAddress(chain.usdc),
      tokenDecimals: 6,
      depositTxHash: txHash.toLowerCase(),
      source: 'deposit',
      lastNonce: null,
      voucher: { header: 'X-Session-Voucher', primaryType: 'Voucher', domain: { name: 'Platform', version: '1', chainId: 8453 } },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    // The deposit is recorded once, naming the session it opened.
    const [payment] = await h.db.select().from(chainPayments).where(eq(chainPayments.txHash, txHash.toLowerCase()))
    expect(payment).toMatchObject({ purpose: 'session_deposit', reference: body.sessionId, chainId: 8453, payer: wallet.address.toLowerCase(), amount: '5000000' })
    const { session } = await stored(h, body.sessionId)
    expect(session).toMatchObject({ walletAddress: wallet.address.toLowerCase(), depositAmount: '5000000', spentAmount: '0' })
  })

  it('GET answers the same session to its wallet, in any case of the address', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[1], '1.5')
    for (const wallet of [s.wallet.address, s.wallet.address.toLowerCase(), s.wallet.address.toUpperCase().replace('0X', '0x')]) {
      const res = await readSession(h, s.sessionId, wallet)
      expect(res.status, wallet).toBe(200)
      expect(res.headers.get('cache-control')).toBe('no-store')
      const { txHash: _, ...opened } = s.opened
      expect(await res.json()).toEqual(opened)
    }
  })
})

describe('payment sessions: from the dashboard (CORS)', () => {
  it('a preflight allows the session headers, and answers expose the receipt headers', async () => {
    const origin = 'http://localhost:3000'
    const pre = await h.web.request('/api/wallet/sessions/x', {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-wallet-address' },
    })
    expect(pre.status).toBe(204)
    const allowed = (pre.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',')
    expect(allowed).toEqual(expect.arrayContaining(['x-session-id', 'x-wallet-address', 'x-session-voucher']))
    const res = await h.web.request(`/api/wallet/sessions/${crypto.randomUUID()}`, { headers: { origin, 'x-wallet-address': chain.payers[0].address } })
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(',')
    expect(exposed).toEqual(expect.arrayContaining(['payment-receipt', 'x-session-remaining']))
  })
})

describe.skipIf(!anvilAvailable)('payment sessions: charging with vouchers', () => {
  it('each call is debited against a signed voucher: receipt session:<id>:<nonce>, remaining USD; GET shows spent and lastNonce', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[2], '0.05')
    for (let n = 1; n <= 3; n++) {
      const res = await charge(app, await s.headers(PRICE))
      expect(res.status).toBe(200)
      expect(res.headers.get('payment-receipt')).toBe(`session:${s.sessionId}:${n}`)
      expect(res.headers.get('x-session-remaining')).toBe(String((5 - n) / 100))
    }
    const read = await (await readSession(h, s.sessionId, s.wallet.address)).json()
    expect(read).toMatchObject({ deposit: '0.05', spent: '0.03', remaining: '0.02', lastNonce: '3' })
    const { vouchers } = await stored(h, s.sessionId)
    expect(vouchers.map((v) => [v.nonce, v.cumulativeAmount, v.amount, v.pluginId]).sort()).toEqual([
      ['1', '10000', '10000', 'test-plugin'],
      ['2', '20000', '10000', 'test-plugin'],
      ['3', '30000', '10000', 'test-plugin'],
    ])
  })

  it('nonces may arrive out of order (concurrent clients): each is used once; the whole deposit can be spent', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[3], '0.03')
    const all = units('0.03')
    for (const nonce of [7n, 2n, 5n]) {
      const voucher = await signVoucher(s.wallet, s.sessionId, { cumulativeAmount: all, nonce })
      const res = await charge(app, sessionHeaders(s, voucher))
      expect(res.status).toBe(200)
      expect(res.headers.get('payment-receipt')).toBe(`session:${s.sessionId}:${nonce}`)
    }
    expect(await (await readSession(h, s.sessionId, s.wallet.address)).json()).toMatchObject({ remaining: '0', lastNonce: '7' })
  })

  it('a failed plugin call is refunded: the balance comes back, the nonce stays used, a second refund gives nothing', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[4], '0.1')
    const voucher = await s.voucher(PRICE)
    const failed = await charge(app, sessionHeaders(s, voucher), '?fail=1')
    expect(failed.status).toBe(502)
    expect(await (await readSession(h, s.sessionId, s.wallet.address)).json()).toMatchObject({ spent: '0', remaining: '0.1', lastNonce: '1' })
    const { vouchers } = await stored(h, s.sessionId)
    expect(vouchers).toEqual([expect.objectContaining({ nonce: '1', amount: '0' })])
    // The refunded voucher cannot be spent again.
    const replay = await charge(app, sessionHeaders(s, voucher))
    expect(replay.status).toBe(402)
    expect((await replay.json()).error).toBe('voucher_failed')
    // The next voucher (cumulative 0.02 > spent 0 + 0.01) pays.
    const next = await charge(app, await s.headers(PRICE))
    expect(next.status).toBe(200)
    expect(next.headers.get('x-session-remaining')).toBe('0.09')
  })

  it('prices below a cent and odd amounts are exact in base units', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[5], '0.000003')
    for (const remaining of ['0.000002', '0.000001', '0']) {
      const res = await charge(app, await s.headers('0.000001'), '?price=0.000001')
      expect(res.status).toBe(200)
      expect(res.headers.get('x-session-remaining')).toBe(remaining)
    }
  })
})

describe.skipIf(!anvilAvailable)('payment sessions: concurrency', () => {
  it('50 concurrent charges on a session worth 10 calls: exactly 10 succeed, the rest are insufficient_balance', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[6], '0.1')
    // Concurrent callers each sign for the whole deposit with their own nonce.
    const vouchers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => signVoucher(s.wallet, s.sessionId, { cumulativeAmount: units('0.1'), nonce: BigInt(i + 1) })),
    )
    const results = await Promise.all(vouchers.map((v) => charge(app, sessionHeaders(s, v))))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((st) => st === 200)).toHaveLength(10)
    expect(statuses.filter((st) => st === 402)).toHaveLength(40)
    for (const r of results.filter((r) => r.status === 402)) {
      expect(await r.json()).toMatchObject({ error: 'insufficient_balance', session: { remaining: '0', cost: '0.01' } })
    }
    const remaining = results.filter((r) => r.status === 200).map((r) => r.headers.get('x-session-remaining'))
    expect(new Set(remaining).size).toBe(10) // each success saw its own balance: 0.09 … 0
    const { session, vouchers: used } = await stored(h, s.sessionId)
    expect(session.spentAmount).toBe(session.depositAmount)
    expect(used).toHaveLength(10)
  })

  it('the same voucher sent 20 times at once is taken once', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[7], '1')
    const headers = await s.headers(PRICE)
    const results = await Promise.all(Array.from({ length: 20 }, () => charge(app, headers)))
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    for (const r of results.filter((r) => r.status !== 200)) expect(await r.json()).toMatchObject({ error: 'voucher_failed' })
    expect((await stored(h, s.sessionId)).session.spentAmount).toBe('10000')
  })

  it('refunds racing replays of the same voucher: no error but voucher_failed, and the balance ends consistent', async () => {
    for (let round = 0; round < 3; round++) {
      const s = await PaymentSessionClient.open(h.web, chain, chain.payers[8], '1')
      const headers = await s.headers(PRICE)
      const results = await Promise.all([charge(app, headers, '?fail=1'), ...Array.from({ length: 10 }, () => charge(app, headers))])
      const statuses = results.map((r) => r.status)
      expect(statuses.every((st) => st === 200 || st === 402 || st === 502), statuses.join()).toBe(true)
      expect(statuses.filter((st) => st !== 402)).toHaveLength(1) // one charge took the nonce
      const { session, vouchers } = await stored(h, s.sessionId)
      expect(vouchers).toHaveLength(1)
      // Either the failing call took it (refunded: nothing spent) or a paying one did.
      expect(session.spentAmount).toBe(statuses[0] === 502 ? '0' : '10000')
      expect(vouchers[0].amount).toBe(session.spentAmount)
    }
  })
})
