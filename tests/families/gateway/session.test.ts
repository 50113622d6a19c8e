import { eq } from 'drizzle-orm'
import { beforeEach, describe, expect, it } from 'vitest'
import { paymentSessions } from '../../../schema'
import { anvilAvailable } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import { startPaymentChain } from '../../support/payment-chain'
import { PaymentSessionClient, sessionHeaders, signVoucher, units } from '../../support/payment-session'
import { gateway, pluginsEnv, startPluginServer } from './helpers'

// The gateway paid from a payment session: the route, the voucher check and the debit together.
describe.skipIf(!anvilAvailable)(`gateway: payment sessions${anvilAvailable ? '' : ' (skipped: anvil not available)'}`, () => {
  const plugins = useFixture(() => startPluginServer())
  const chain = useFixture(() => startPaymentChain())
  // A generous upstream timeout: 50 calls at once on a busy machine must not time out (the timeout has its own tests).
  const h = useHarness(() => ({ env: { ...pluginsEnv(plugins), GATEWAY_UPSTREAM_TIMEOUT_MS: '15000', ...chain.env } }))
  beforeEach(() => plugins.reset())

  const price = '0.01' // the agent plugin's default price

  it('a signed voucher pays the call: the receipt names session and nonce, X-Session-Remaining the balance after it', async () => {
    const session = await PaymentSessionClient.open(h.web, chain, chain.payers[0], '0.05')
    const res = await gateway(h, { body: { plugin: 'agent', prompt: 'hi' }, headers: { ...(await session.headers(price)), accept: 'application/json' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('payment-receipt')).toBe(`session:${session.sessionId}:1`)
    expect(res.headers.get('x-session-remaining')).toBe('0.04')
    expect(await res.json()).toMatchObject({ plugin: 'agent', received: { prompt: 'hi' } })
    const second = await gateway(h, { body: { plugin: 'agent' }, headers: await session.headers(price) })
    expect(second.headers.get('payment-receipt')).toBe(`session:${session.sessionId}:2`)
    expect(second.headers.get('x-session-remaining')).toBe('0.03')
  })

  it('50 concurrent calls on a session worth 10 calls: exactly 10 succeed, the rest are insufficient_balance', async () => {
    const session = await PaymentSessionClient.open(h.web, chain, chain.payers[1], '0.1')
    // Each voucher is signed for the whole deposit: every call could be paid on its own; only the balance decides.
    const vouchers = await Promise.all(Array.from({ length: 50 }, (_, i) => signVoucher(session.wallet, session.sessionId, { cumulativeAmount: units('0.1'), nonce: BigInt(i + 1) })))
    const results = await Promise.all(vouchers.map((v) => gateway(h, { body: { plugin: 'agent' }, headers: sessionHeaders(session, v) })))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(10)
    const refused = await Promise.all(results.filter((r) => r.status !== 200).map((r) => r.json()))
    expect(refused).toHaveLength(40)
    for (const body of refused) expect(body).toMatchObject({ error: 'insufficient_balance', session: { remaining: '0', cost: price } })
    expect(plugins.received).toHaveLength(10)
    const [row] = await h.db.select().from(paymentSessions).where(eq(paymentSessions.id, session.sessionId))
    expect(row.spentAmount).toBe(String(units('0.1')))
  })

  it('a replayed voucher is voucher_failed and the plugin is not called', async () => {
    const session = await PaymentSessionClient.open(h.web, chain, chain.payers[2], '0.05')
    const headers = await session.headers(price)
    expect((await gateway(h, { body: { plugin: 'agent' }, headers })).status).toBe(200)
    const replay = await gateway(h, { body: { plugin: 'agent' }, headers })
    expect(replay.status).toBe(402)
    expect(await replay.json()).toMatchObject({ error: 'voucher_failed' })
    expect(plugins.received).toHaveLength(1)
  })

  it('missing session headers are session_required; another wallet is session_invalid; a forged signer voucher_failed', async () => {
    const session = await PaymentSessionClient.open(h.web, chain, chain.payers[3], '0.05')
    const missing = await gateway(h, { body: { plugin: 'agent' }, headers: { 'x-payment-method': 'session' } })
    expect(missing.status).toBe(402)
    expect((await missing.json()).error).toBe('session_required')
    const otherWallet = await gateway(h, { body: { plugin: 'agent' }, headers: { ...(await session.headers(price)), 'x-wallet-address': chain.payers[4].address } })
    expect((await otherWallet.json()).error).toBe('session_invalid')
    const forged = await signVoucher(chain.payers[5], session.sessionId, { cumulativeAmount: units('0.05'), nonce: 99n })
    const res = await gateway(h, { body: { plugin: 'agent' }, headers: sessionHeaders(session, forged) })
    expect(res.status).toBe(402)
    expect((await res.json()).error).toBe('voucher_failed')
    expect(plugins.received).toHaveLength(0)
  })

  it('a plugin that fails is refunded: the balance is unchanged and the next voucher pays', async () => {
    const session = await PaymentSessionClient.open(h.web, chain, chain.payers[6], '0.02')
    plugins.behave('agent', 'fail')
    const failed = await gateway(h, { body: { plugin: 'agent' }, headers: await session.headers(price) })
    expect(failed.status).toBe(500)
    const [row] = await h.db.select().from(paymentSessions).where(eq(paymentSessions.id, session.sessionId))
    expect(row.spentAmount).toBe('0')
    plugins.behave('agent', 'json')
    const ok = await gateway(h, { body: { plugin: 'agent' }, headers: await session.headers(price) })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('x-session-remaining')).toBe('0.01')
  })
})
