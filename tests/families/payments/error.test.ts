import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { encodeFunctionData, erc20Abi, parseUnits } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { randomHex } from '../../../lib/crypto'
import { chainPayments } from '../../../schema'
import { anvilAvailable, anvilClients } from '../../support/anvil'
import { createHarness, useFixture, useHarness } from '../../support/harness'
import { closedUrl } from '../../support/loopback'
import { mppMemo, mppSecret, startPaymentChain } from '../../support/payment-chain'
import { PaymentSessionClient, postOpen, sessionHeaders, signVoucher, units } from '../../support/payment-session'
import { withinOneWindow } from '../../support/requests'
import { charge, chargeApp, expectGatewayError, PRICE, readSession, type ChargeApp } from './helpers'

let app: ChargeApp
// A chain with deployed tokens and funded wallets, then a harness: minutes on a loaded 2-core machine.
const chain = useFixture(() => startPaymentChain(), { timeout: 180_000 })
const h = useHarness(() => ({ env: chain.env }))
beforeAll(() => {
  app = chargeApp(h)
})

const refusal = async (res: Response, status: number, code: string, extra: Record<string, unknown> = {}) => {
  const body = await res.json()
  expect(res.status, JSON.stringify(body)).toBe(status)
  expect(body).toMatchObject({ code, ...extra })
  return body as { error: string; code: string }
}

describe.skipIf(!anvilAvailable)('open: errors', () => {
  it('400 VALIDATION for missing or malformed fields, 400 INVALID_JSON for a body that is not JSON', async () => {
    const wallet = chain.payers[0].address
    const hash = `0x${'ab'.repeat(32)}`
    const cases: Array<[unknown, string]> = [
      [{}, 'walletAddress required'],
      [{ walletAddress: wallet }, 'txHash required'],
      [{ walletAddress: '0x1234', txHash: hash }, 'walletAddress must be a 0x-prefixed 40-hex-digit address'],
      [{ walletAddress: wallet, txHash: '0x1234' }, 'txHash must be a 0x-prefixed 32-byte transaction hash'],
      [{ walletAddress: wallet, txHash: 42 }, 'txHash required'],
      [{ walletAddress: wallet, txHash: hash, message: 'm', signature: 'not hex' }, 'Invalid signature'],
      [{ walletAddress: wallet, txHash: hash, message: 'm'.repeat(8193), signature: '0x00' }, 'Message too long'],
    ]
    for (const [body, error] of cases) {
      const res = await postOpen(h.web, body)
      expect(await refusal(res, 400, 'VALIDATION'), JSON.stringify(body)).toMatchObject({ error })
      expect(res.headers.get('ratelimit-limit')).toBeNull() // refused before the limiter
    }
    await refusal(await postOpen(h.web, '{"walletAddress":'), 400, 'INVALID_JSON')
  })

  it('402 DEPOSIT_INVALID not_found: no such transaction', async () => {
    const res = await postOpen(h.web, { walletAddress: chain.payers[0].address, txHash: `0x${'ab'.repeat(32)}` }, chain.payers[0])
    expect(await refusal(res, 402, 'DEPOSIT_INVALID', { reason: 'not_found' })).toMatchObject({ error: 'Deposit transaction not found, or not mined yet' })
  })

  it('402 reverted: the transfer failed on chain', async () => {
    const payer = chain.payers[0]
    const { client, wallet } = anvilClients(chain.anvil, payer)
    // More than the payer holds: the token reverts. An explicit gas limit skips estimation, so it is mined.
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [chain.recipient, parseUnits('1000000', 6)] })
    const txHash = await wallet.sendTransaction({ to: chain.usdc, data, gas: 100_000n })
    expect((await client.waitForTransactionReceipt({ hash: txHash })).status).toBe('reverted')
    await refusal(await postOpen(h.web, { walletAddress: payer.address, txHash }, payer), 402, 'DEPOSIT_INVALID', { reason: 'reverted', error: 'Deposit transaction reverted' })
  })

  it('402 wrong_token, wrong_recipient, wrong_payer, empty', async () => {
    const [payer, other] = [chain.payers[0], chain.payers[1]]
    // One at a time: transactions from one account take its nonces in turn.
    const cases: Array<[() => Promise<`0x${string}`>, string]> = [
      [() => chain.pay(payer, { amount: '1', token: chain.otherToken }), 'wrong_token'],
      [() => chain.pay(payer, { amount: '1', to: other.address }), 'wrong_recipient'],
      [() => chain.pay(other, { amount: '1' }), 'wrong_payer'],
      [() => chain.pay(payer, { amount: '0' }), 'empty'],
    ]
    for (const [pay, reason] of cases) {
      const txHash = await pay()
      const walletAddress = payer.address
      await refusal(await postOpen(h.web, { walletAddress, txHash }, payer), 402, 'DEPOSIT_INVALID', { reason })
    }
  })

  it('402 memo_bound: a direct transfer that carries a memo (an MPP payment) or any bytes after its arguments, even from the proven payer; nothing recorded', async () => {
    const payer = chain.payers[3]
    for (const memo of [mppMemo(randomHex(32), mppSecret()), '0x01'] as const) {
      const txHash = await chain.pay(payer, { amount: '1', memo })
      const res = await postOpen(h.web, { walletAddress: payer.address, txHash }, payer)
      expect(await refusal(res, 402, 'DEPOSIT_INVALID', { reason: 'memo_bound' })).toMatchObject({ error: 'The transfer carries a payment memo: it pays a gateway call' })
      expect(await h.db.select().from(chainPayments).where(eq(chainPayments.txHash, txHash.toLowerCase()))).toEqual([])
    }
    // the same payer's plain transfer opens a session
    expect((await postOpen(h.web, { walletAddress: payer.address, txHash: await chain.pay(payer, { amount: '1' }) }, payer)).status).toBe(201)
  })

  it('409 DEPOSIT_USED: the same transaction twice, in any case', async () => {
    const payer = chain.payers[2]
    const txHash = await chain.pay(payer, { amount: '1' })
    expect((await postOpen(h.web, { walletAddress: payer.address, txHash }, payer)).status).toBe(201)
    for (const hash of [txHash, txHash.toUpperCase().replace('0X', '0x')]) {
      const again = await postOpen(h.web, { walletAddress: payer.address, txHash: hash }, payer)
      expect(await refusal(again, 409, 'DEPOSIT_USED')).toMatchObject({ error: 'This transaction has already been used' })
    }
  })

  it('one transaction posted 8 times at once opens one session: one 201, seven 409', async () => {
    const payer = chain.payers[3]
    const txHash = await chain.pay(payer, { amount: '1' })
    const results = await Promise.all(Array.from({ length: 8 }, () => postOpen(h.web, { walletAddress: payer.address, txHash }, payer)))
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409])
  })

  it('429 after 10 opens per minute from one address (counted after validation, before the wallet proof)', async () => {
    await withinOneWindow(60)
    const ip = `198.18.250.${Math.floor(Math.random() * 250)}`
    const post = (body: unknown) =>
      h.web.request('/api/wallet/sessions', { method: 'POST', headers: { 'content-type': 'application/json', 'cf-connecting-ip': ip }, body: JSON.stringify(body) })
    const unknown = { walletAddress: chain.payers[0].address, txHash: `0x${'cd'.repeat(32)}` }
    expect((await post({})).status).toBe(400) // not counted
    for (let i = 1; i <= 10; i++) {
      const res = await post(unknown)
      expect(res.status, `request ${i}`).toBe(401) // no proof: SIGNATURE_REQUIRED, after the limiter counted it
      expect(res.headers.get('ratelimit-remaining')).toBe(String(10 - i))
    }
    const refused = await post(unknown)
    expect(await refusal(refused, 429, 'RATE_LIMITED')).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  })

  it('503 NOT_CONFIGURED without PAYMENT_RECIPIENT, before any chain call', { timeout: 120_000 }, async () => {
    const bare = await createHarness({ env: { BASE_RPC_URL: await closedUrl() } })
    try {
      const res = await postOpen(bare.web, { walletAddress: chain.payers[0].address, txHash: `0x${'ab'.repeat(32)}` })
      expect(await refusal(res, 503, 'NOT_CONFIGURED')).toEqual({ error: 'Payment sessions not configured', code: 'NOT_CONFIGURED' })
    } finally {
      await bare.close()
    }
  })

  it('503 CHAIN_UNAVAILABLE when the RPC does not answer', { timeout: 120_000 }, async () => {
    const down = await createHarness({ env: { ...chain.env, BASE_RPC_URL: await closedUrl() } })
    try {
      const res = await postOpen(down.web, { walletAddress: chain.payers[0].address, txHash: `0x${'ab'.repeat(32)}` }, chain.payers[0])
      expect(await refusal(res, 503, 'CHAIN_UNAVAILABLE')).toEqual({ error: 'The chain could not be reached', code: 'CHAIN_UNAVAILABLE' })
    } finally {
      await down.close()
    }
  })
})

describe.skipIf(!anvilAvailable)('read: errors', () => {
  it('404 for an unknown id, a malformed id, or another wallet: the same answer', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[4], '0.5')
    const stranger = privateKeyToAccount(generatePrivateKey()).address
    const answers = await Promise.all([
      readSession(h, crypto.randomUUID(), s.wallet.address),
      readSession(h, 'not-a-session', s.wallet.address),
      readSession(h, s.sessionId, stranger),
    ])
    for (const res of answers) expect(await refusal(res, 404, 'NOT_FOUND')).toEqual({ error: 'Payment session not found', code: 'NOT_FOUND' })
  })

  it('400 VALIDATION without X-Wallet-Address or with one that is not an address', async () => {
    const id = crypto.randomUUID()
    const missing = await h.web.request(`/api/wallet/sessions/${id}`)
    expect(await refusal(missing, 400, 'VALIDATION')).toMatchObject({ error: 'X-Wallet-Address required' })
    await refusal(await readSession(h, id, 'alice'), 400, 'VALIDATION')
  })
})

describe.skipIf(!anvilAvailable)('charge: refusals', () => {
  it('session_required without X-Session-Id or X-Wallet-Address', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[5], '0.05')
    const full = await s.headers(PRICE)
    for (const drop of ['x-session-id', 'x-wallet-address']) {
      const { [drop]: _, ...headers } = full
      await expectGatewayError(await charge(app, headers), 402, 'session_required')
    }
    await expectGatewayError(await charge(app, {}), 402, 'session_required')
  })

  it('session_invalid: unknown id, malformed id, malformed wallet; whatever the voucher', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[5], '0.05')
    const voucher = await s.voucher(PRICE)
    const cases = [
      { ...sessionHeaders(s, voucher), 'x-session-id': crypto.randomUUID() },
      { ...sessionHeaders(s, voucher), 'x-session-id': 'nope' },
      { ...sessionHeaders(s, voucher), 'x-wallet-address': '0x1234' },
      { ...sessionHeaders(s), 'x-session-id': crypto.randomUUID() }, // no voucher either
    ]
    for (const headers of cases) {
      const body = await expectGatewayError(await charge(app, headers), 402, 'session_invalid')
      expect(body.message).toBe('No payment session with that id belongs to that wallet')
    }
  })

  it('voucher_failed: missing, garbled, or not a voucher', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[5], '0.05')
    const good = JSON.parse(Buffer.from(await s.voucher(PRICE), 'base64url').toString()) as Record<string, string>
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
    const garbled = [
      '!!!',
      b64('a string'),
      b64({ ...good, nonce: '-1' }),
      b64({ ...good, cumulativeAmount: '1.5' }),
      b64({ ...good, nonce: (2n ** 256n).toString() }),
      b64({ ...good, signature: '0x1234' }),
      b64({ ...good, signature: undefined }),
      'x'.repeat(2000),
    ]
    await expectGatewayError(await charge(app, sessionHeaders(s)), 402, 'voucher_failed')
    for (const voucher of garbled) await expectGatewayError(await charge(app, sessionHeaders(s, voucher)), 402, 'voucher_failed')
    expect(await (await readSession(h, s.sessionId, s.wallet.address)).json()).toMatchObject({ spent: '0', lastNonce: null })
  })

  it('voucher_failed when cumulativeAmount does not cover spent + price', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[5], '0.05')
    expect((await charge(app, await s.headers(PRICE))).status).toBe(200)
    // Signed for 0.01 in all: the session has spent 0.01 already.
    const stale = await signVoucher(s.wallet, s.sessionId, { cumulativeAmount: units('0.01'), nonce: 99n })
    const body = await expectGatewayError(await charge(app, sessionHeaders(s, stale)), 402, 'voucher_failed')
    expect(body.message).toBe('The voucher’s cumulativeAmount does not cover this call')
    // Its nonce was not spent by the refusal.
    const fresh = await signVoucher(s.wallet, s.sessionId, { cumulativeAmount: units('0.02'), nonce: 99n })
    expect((await charge(app, sessionHeaders(s, fresh))).status).toBe(200)
  })

  it('insufficient_balance with session.remaining and session.cost when the deposit cannot cover the price', async () => {
    const s = await PaymentSessionClient.open(h.web, chain, chain.payers[5], '0.015')
    expect((await charge(app, await s.headers(PRICE))).status).toBe(200)
    const body = await expectGatewayError(await charge(app, await s.headers(PRICE)), 402, 'insufficient_balance')
    expect(body).toEqual({
      error: 'insufficient_balance',
      code: 'INSUFFICIENT_BALANCE',
      message: 'The payment session cannot cover this call',
      session: { remaining: '0.005', cost: '0.01' },
    })
    // A cheaper call still fits.
    expect((await charge(app, await s.headers('0.005'), '?price=0.005')).status).toBe(200)
  })
})
