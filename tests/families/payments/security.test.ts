import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { chainPayments } from '../../../schema'
import { anvilAvailable, startAnvil } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import { startPaymentChain } from '../../support/payment-chain'
import { PaymentSessionClient, postOpen, sessionHeaders, signVoucher, units } from '../../support/payment-session'
import { walletProof } from '../../support/wallet-proof'
import { charge, chargeApp, expectGatewayError, PRICE, readSession, stored, type ChargeApp } from './helpers'

let app: ChargeApp
let alice: PaymentSessionClient
let bob: PaymentSessionClient
// A chain with deployed tokens and funded wallets, then a harness: minutes on a loaded 2-core machine.
const chain = useFixture(() => startPaymentChain(), { timeout: 180_000 })
const h = useHarness(() => ({ env: chain.env }))
beforeAll(async () => {
  app = chargeApp(h)
  alice = await PaymentSessionClient.open(h.web, chain, chain.payers[0], '1')
  bob = await PaymentSessionClient.open(h.web, chain, chain.payers[1], '1')
}, 180_000)

const spent = async (s: PaymentSessionClient) => (await stored(h, s.sessionId)).session.spentAmount

describe.skipIf(!anvilAvailable)('payment sessions: security', () => {
  it('a voucher signed by any key but the session’s wallet is refused (voucher_failed), and nothing is taken', async () => {
    const forger = privateKeyToAccount(generatePrivateKey())
    const forged = await signVoucher(forger, alice.sessionId, { cumulativeAmount: units('1'), nonce: 1000n })
    const body = await expectGatewayError(await charge(app, sessionHeaders(alice, forged)), 402, 'voucher_failed')
    expect(body.message).toBe('The voucher is not signed by the session’s wallet for this session')
    // Bob signing for Alice's session is no better.
    const bobs = await signVoucher(bob.wallet, alice.sessionId, { cumulativeAmount: units('1'), nonce: 1001n })
    await expectGatewayError(await charge(app, sessionHeaders(alice, bobs)), 402, 'voucher_failed')
    expect(await spent(alice)).toBe('0')
  })

  it('naming another wallet’s session is session_invalid, even with a voucher that wallet signed for it', async () => {
    const voucher = await signVoucher(bob.wallet, alice.sessionId, { cumulativeAmount: units('1'), nonce: 1002n })
    const headers = { ...sessionHeaders(alice, voucher), 'x-wallet-address': bob.wallet.address }
    await expectGatewayError(await charge(app, headers), 402, 'session_invalid')
    expect(await spent(alice)).toBe('0')
  })

  it('a voucher for one session does not pay on another session of the same wallet', async () => {
    const second = await PaymentSessionClient.open(h.web, chain, alice.wallet as typeof chain.payers[0], '1')
    const forFirst = await alice.voucher(PRICE)
    await expectGatewayError(await charge(app, sessionHeaders(second, forFirst)), 402, 'voucher_failed')
    expect(await spent(second)).toBe('0')
    // It still pays where it belongs.
    expect((await charge(app, sessionHeaders(alice, forFirst))).status).toBe(200)
  })

  it('a replayed voucher is refused (voucher_failed) even when its cumulative amount would still cover the call', async () => {
    const voucher = await signVoucher(bob.wallet, bob.sessionId, { cumulativeAmount: units('1'), nonce: 1n })
    expect((await charge(app, sessionHeaders(bob, voucher))).status).toBe(200)
    const before = await spent(bob)
    const body = await expectGatewayError(await charge(app, sessionHeaders(bob, voucher)), 402, 'voucher_failed')
    expect(body.message).toBe('The voucher’s nonce was already used')
    expect(await spent(bob)).toBe(before)
  })

  it('GET with another wallet answers exactly as an unknown session does', async () => {
    const other = await readSession(h, alice.sessionId, bob.wallet.address)
    const unknown = await readSession(h, crypto.randomUUID(), bob.wallet.address)
    expect(other.status).toBe(404)
    expect(await other.json()).toEqual(await unknown.json())
  })

  it('a deposit claimed by a wallet that did not pay is refused (wrong_payer), even with that wallet proven', async () => {
    const txHash = await chain.pay(chain.payers[2], { amount: '1' })
    const thief = privateKeyToAccount(generatePrivateKey())
    const res = await postOpen(h.web, { walletAddress: thief.address, txHash }, thief)
    expect(res.status).toBe(402)
    expect(await res.json()).toMatchObject({ code: 'DEPOSIT_INVALID', reason: 'wrong_payer' })
    // The real payer can still open with it.
    expect((await postOpen(h.web, { walletAddress: chain.payers[2].address, txHash }, chain.payers[2])).status).toBe(201)
  })

  it('nobody but the payer opens its deposit: no proof, another key\'s signature or a proof of another wallet is refused; the payer then opens it', async () => {
    const payer = chain.payers[4]
    const txHash = await chain.pay(payer, { amount: '1' })
    const thief = privateKeyToAccount(generatePrivateKey())
    const claim = { walletAddress: payer.address, txHash }
    // The hash and the payer's address are public on chain: naming them proves nothing.
    const bare = await postOpen(h.web, claim)
    expect(bare.status).toBe(401)
    expect(await bare.json()).toEqual({ error: 'Wallet proof required: `message` and `signature`', code: 'SIGNATURE_REQUIRED' })
    const forged = await postOpen(h.web, claim, thief) // the thief signs a message naming the payer
    expect(forged.status).toBe(401)
    expect(await forged.json()).toMatchObject({ code: 'SIGNATURE_INVALID' })
    const own = await walletProof(h.web, 'paymentSession', thief.address, thief) // a valid proof, of the thief's wallet
    const mismatched = await postOpen(h.web, { ...claim, ...own })
    expect(mismatched.status).toBe(401)
    expect(await mismatched.json()).toMatchObject({ code: 'ADDRESS_MISMATCH' })
    expect(await h.db.select().from(chainPayments).where(eq(chainPayments.txHash, txHash.toLowerCase()))).toEqual([])

    const first = await postOpen(h.web, claim, payer)
    expect(first.status).toBe(201)
    const { sessionId } = (await first.json()) as { sessionId: string }
    // The payer's repeat (a lost answer) finds its session.
    const again = await postOpen(h.web, { walletAddress: payer.address.toLowerCase(), txHash }, payer)
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ code: 'DEPOSIT_USED', sessionId })
    // A proven wallet that did not pay learns nothing (its claim is refused before the deposit is looked up).
    const other = await postOpen(h.web, { walletAddress: chain.payers[5].address, txHash }, chain.payers[5])
    expect(other.status).toBe(402)
    expect(await other.json()).not.toHaveProperty('sessionId')
  })

  it('a proof is single use and for this purpose only: replayed, expired, a sign-in message or a DJ proof is refused', async () => {
    const payer = chain.payers[6]
    const txHash = await chain.pay(payer, { amount: '1' })
    const claim = { walletAddress: payer.address, txHash }
    const proof = await walletProof(h.web, 'paymentSession', payer.address, payer)
    expect((await postOpen(h.web, { ...claim, ...proof })).status).toBe(201)
    const replayed = await postOpen(h.web, { ...claim, ...proof })
    expect(replayed.status).toBe(401)
    expect(await replayed.json()).toEqual({ error: 'Invalid or expired nonce', code: 'NONCE_INVALID' })

    const next = await chain.pay(payer, { amount: '1' })
    const refusals: Array<[Awaited<ReturnType<typeof walletProof>>, number, string]> = [
      [await walletProof(h.web, 'paymentSession', payer.address, payer, { expirationTime: new Date(Date.now() - 1000) }), 401, 'MESSAGE_EXPIRED'],
      [await walletProof(h.web, 'paymentSession', payer.address, payer, { statement: undefined }), 400, 'MESSAGE_MALFORMED'],
      [await walletProof(h.web, 'radio', payer.address, payer), 400, 'MESSAGE_MALFORMED'],
      [await walletProof(h.web, 'paymentSession', payer.address, payer, { domain: 'evil.example' }), 401, 'DOMAIN_MISMATCH'],
    ]
    for (const [p, status, code] of refusals) {
      const res = await postOpen(h.web, { walletAddress: payer.address, txHash: next, ...p })
      expect(res.status, code).toBe(status)
      expect(await res.json()).toMatchObject({ code })
    }
    expect((await postOpen(h.web, { walletAddress: payer.address, txHash: next }, payer)).status).toBe(201)
  })

  it('a transaction that already paid a gateway call (MPP) cannot open a session', async () => {
    const txHash = await chain.pay(chain.payers[3], { amount: '1' })
    await h.db.insert(chainPayments).values({
      txHash: txHash.toLowerCase(),
      purpose: 'mpp',
      reference: 'challenge-nonce',
      chainId: 8453,
      token: chain.usdc.toLowerCase(),
      payer: chain.payers[3].address.toLowerCase(),
      recipient: chain.recipient.toLowerCase(),
      amount: '1000000',
    })
    const res = await postOpen(h.web, { walletAddress: chain.payers[3].address, txHash }, chain.payers[3])
    expect(res.status).toBe(409)
    const body = await res.json()
    expect(body).toMatchObject({ code: 'DEPOSIT_USED' })
    expect(body).not.toHaveProperty('sessionId')
  })
})

describe.skipIf(!anvilAvailable)('payment sessions: an RPC that serves another chain', () => {
  const testnet = useFixture(() => startAnvil({ chainId: 84532 }), { timeout: 120_000 })
  const wrong = useHarness(() => ({ env: { ...chain.env, BASE_RPC_URL: testnet.url } }))

  it('is refused before any deposit is read (503 CHAIN_UNAVAILABLE): a testnet transfer is not money', async () => {
    const res = await postOpen(wrong.web, { walletAddress: chain.payers[0].address, txHash: `0x${'ab'.repeat(32)}` }, chain.payers[0])
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'The chain could not be reached', code: 'CHAIN_UNAVAILABLE' })
  })
})
