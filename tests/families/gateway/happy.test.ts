import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { readUsage } from '../../../lib/billing/usage'
import { chainPayments, users } from '../../../schema'
import { anvilAvailable } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { startPaymentChain, type PaymentChain } from '../../support/payment-chain'
import { startStripeServer, stripeEnv } from '../../support/stripe-server'
import { AUDIO, challengeOf, gateway, payChallenge, pluginsEnv, setPlan, startPluginServer } from './helpers'

const DAY = 24 * 60 * 60 * 1000

let chain: PaymentChain | undefined

const plugins = useFixture(() => startPluginServer())
const stripe = useFixture(() => startStripeServer())
beforeAll(async () => {
  chain = anvilAvailable ? await startPaymentChain() : undefined
})
const h = useHarness(() => ({ env: { ...pluginsEnv(plugins, { stt: { price: '0' } }), ...stripeEnv(stripe), ...chain?.env } }))
beforeAll(async () => {
  await setPlan(h, h.users.alice, 'solo')
})
afterAll(() => chain?.close())
beforeEach(() => plugins.reset())

describe('gateway: card plan (the default method)', () => {
  it('relays the plugin’s JSON answer for a signed-in paid caller, forwarding the body without `plugin`, and spends one unit', async () => {
    const { alice } = h.users
    const before = await readUsage(h.services.kv, alice.id, 'solo')
    const res = await gateway(h, { user: alice, body: { plugin: 'agent', prompt: 'hello', options: { n: 1 } }, headers: { accept: 'application/json' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.headers.get('x-plugin-id')).toBe('agent')
    expect(res.headers.get('payment-receipt')).toBeNull()
    expect(res.headers.get('ratelimit-limit')).toBe('100')
    expect(await res.json()).toEqual({ plugin: 'agent', received: { prompt: 'hello', options: { n: 1 } } })
    expect(plugins.received).toHaveLength(1)
    expect(plugins.received[0].headers.accept).toBe('application/json')
    expect(plugins.received[0].headers['content-type']).toBe('application/json')
    const after = await readUsage(h.services.kv, alice.id, 'solo')
    expect(after.used - before.used).toBe(1)
  })

  it('the plugin comes from X-Plugin-Id over the body’s `plugin`, and is `agent` by default', async () => {
    const { alice } = h.users
    const byHeader = await gateway(h, { user: alice, body: { plugin: 'agent' }, headers: { 'x-plugin-id': 'generate-text' } })
    expect(byHeader.headers.get('x-plugin-id')).toBe('generate-text')
    const byBody = await gateway(h, { user: alice, body: { plugin: 'generate-text' } })
    expect(byBody.headers.get('x-plugin-id')).toBe('generate-text')
    const byDefault = await gateway(h, { user: alice, body: {} })
    expect(byDefault.headers.get('x-plugin-id')).toBe('agent')
    expect(plugins.received.map((r) => r.path)).toEqual(['/generate-text', '/generate-text', '/agent'])
  })

  it('an event stream is relayed as it arrives: the first event reaches the client before the upstream sends the last', async () => {
    plugins.behave('agent', 'gated')
    const res = await gateway(h, { user: h.users.alice, headers: { accept: 'text/event-stream' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    expect(res.headers.get('cache-control')).toBe('no-cache')
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    while (!text.includes('first')) text += decoder.decode((await reader.read()).value)
    expect(text).not.toContain('last') // the upstream has not sent it yet: it waits for release()
    plugins.release()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    expect(text).toBe('data: first\n\ndata: last\n\n')
  })

  it('a streaming plugin asked for a stream relays the whole event stream', async () => {
    const res = await gateway(h, { user: h.users.alice, headers: { 'x-plugin-id': 'generate-text', accept: 'text/event-stream' } })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n')
    expect(plugins.received[0].headers.accept).toBe('text/event-stream')
  })

  it('a binary answer (tts audio) is relayed byte for byte with its content type', async () => {
    plugins.behave('tts', 'audio')
    const res = await gateway(h, { user: h.users.alice, body: { plugin: 'tts', text: 'hi' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('audio/mpeg')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(AUDIO)
  })

  it('the plugin’s own 4xx is relayed with its status and body (the call was served: it is paid)', async () => {
    plugins.behave('agent', 'teapot')
    const before = await readUsage(h.services.kv, h.users.alice.id, 'solo')
    const res = await gateway(h, { user: h.users.alice })
    expect(res.status).toBe(418)
    expect(res.headers.get('x-plugin-answer')).toBe('relayed')
    expect(await res.json()).toEqual({ error: 'short and stout' })
    expect((await readUsage(h.services.kv, h.users.alice.id, 'solo')).used - before.used).toBe(1)
  })

  it('a plugin’s own answer in a status the gateway also answers with (402) is told apart by `X-Plugin-Answer: relayed`', async () => {
    plugins.behave('agent', 'own402')
    const relayed = await gateway(h, { user: h.users.alice })
    expect(relayed.status).toBe(402)
    expect(relayed.headers.get('x-plugin-answer')).toBe('relayed')
    expect(await relayed.json()).toEqual({ error: 'the plugin asks for its own payment' })
    // The gateway's own 402 (an anonymous caller's challenge) never carries it.
    const own = await gateway(h)
    expect(own.status).toBe(402)
    expect(own.headers.get('x-plugin-answer')).toBeNull()
    expect(await own.json()).toMatchObject({ error: 'payment_required', code: 'PAYMENT_REQUIRED' })
  })

  it('a 204 from the plugin is relayed without a body', async () => {
    plugins.behave('agent', 'empty')
    const res = await gateway(h, { user: h.users.alice })
    expect(res.status).toBe(204)
    expect(await res.text()).toBe('')
  })

  it('a plugin priced 0 is free: anonymous callers are served, nothing is asked', async () => {
    const res = await gateway(h, { body: { plugin: 'stt', audio: 'AAAA' } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ plugin: 'stt', received: { audio: 'AAAA' } })
  })
})

describe('gateway: the 402 challenge', () => {
  it('anonymous: 402 payment_required with the MPP challenge, WWW-Authenticate and the pricing page', async () => {
    const res = await gateway(h, { body: { plugin: 'tts' } })
    expect(res.status).toBe(402)
    expect(res.headers.get('x-plugin-id')).toBe('tts')
    const { body, params, mpp } = await challengeOf(res)
    expect(body).toMatchObject({
      error: 'payment_required',
      code: 'PAYMENT_REQUIRED',
      message: expect.stringContaining('no payment came with the call'),
      stripe: { checkoutUrl: 'http://localhost:3000/pricing?plugin=tts', amount: '0.002', currency: 'usd' },
    })
    expect(mpp).toMatchObject({ scheme: 'Payment', amount: '0.002', currency: 'USDC', chainId: 8453 })
    if (chain) {
      expect(mpp.recipient).toBe(chain.recipient)
      expect(mpp.token).toBe(chain.usdc)
      expect(mpp.nonce).toMatch(/^[0-9a-f]{64}$/)
      expect(Date.parse(mpp.expiresAt) - Date.now()).toBeGreaterThan(4 * 60_000)
      expect(params).toMatchObject({ amount: '0.002', currency: 'USDC', recipient: chain.recipient, nonce: mpp.nonce, id: mpp.id, method: 'evm', intent: 'charge' })
      expect(params).toMatchObject({ request: mpp.request, expires: mpp.expiresAt })
      expect(mpp.id).toMatch(/^[0-9a-f]{64}$/)
      expect(mpp.id).not.toBe(mpp.nonce)
      const request = JSON.parse(Buffer.from(params.request, 'base64url').toString())
      expect(request).toMatchObject({
        amount: '2000',
        currency: chain.usdc,
        recipient: chain.recipient,
        methodDetails: { chainId: 8453, decimals: 6, plugin: 'tts', nonce: mpp.nonce, memo: 'keccak256(id || secret)' },
      })
    }
    // a single-use challenge: no cache may keep it (the request carried no credential, so only the 402 says so)
    expect(res.headers.get('cache-control')).toBe('no-store')
    // no Stripe call for an anonymous caller
    expect(stripe.requests).toHaveLength(0)
  })

  it('signed in without a paid plan: the checkout is the plan checkout, whose Stripe session is made only when followed', async () => {
    const { bob } = h.users
    const first = await gateway(h, { user: bob })
    expect(first.status).toBe(402)
    const { body } = await challengeOf(first)
    expect(body).toMatchObject({
      message: expect.stringContaining('no paid plan'),
      stripe: { checkoutUrl: 'http://localhost:3000/api/stripe/checkout?plan=solo', amount: '0.01', currency: 'usd' },
    })
    expect(stripe.sessions).toHaveLength(0) // an unpaid call costs no Stripe request
    // Following it (the browser, signed in) makes a real Stripe Checkout Session through the billing code.
    const follow = await call(h, 'GET', '/api/stripe/checkout?plan=solo', { user: bob })
    expect(follow.status).toBe(303)
    expect(follow.headers.get('location')).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/)
    expect(stripe.sessions).toHaveLength(1)
    expect(stripe.sessions[0]).toMatchObject({ mode: 'subscription', client_reference_id: bob.id })
  })
})

describe('gateway: credits pay once the day’s allowance is spent', () => {
  it('a call past the allowance takes 1 unit of credits (1 credit = 100 units); a plugin that fails gives it back', async () => {
    const cleo = await h.seedUser('Cleo', `cleo-${crypto.randomUUID().slice(0, 8)}@example.com`)
    await setPlan(h, cleo, 'solo')
    await h.db.update(users).set({ credits: 1 }).where(eq(users.id, cleo.id))
    await h.services.kv.incr(`usage:${cleo.id}:${new Date().toISOString().slice(0, 10)}`, 600, 60_000)
    const balance = async () => (await h.db.select({ credits: users.credits, creditUnits: users.creditUnits }).from(users).where(eq(users.id, cleo.id)))[0]

    const paid = await gateway(h, { user: cleo, body: { plugin: 'agent', prompt: 'hi' }, headers: { accept: 'application/json' } })
    expect(paid.status).toBe(200)
    expect(await balance()).toEqual({ credits: 0, creditUnits: 99 })
    expect((await readUsage(h.services.kv, cleo.id, 'solo')).used).toBe(600) // the counter never passes the allowance

    plugins.behave('agent', 'fail')
    try {
      expect((await gateway(h, { user: cleo })).status).toBe(500)
    } finally {
      plugins.behave('agent', 'json')
    }
    expect(await balance()).toEqual({ credits: 0, creditUnits: 99 })
  })
})

describe('gateway: the card plan needs paid access at the moment of use', () => {
  afterEach(() => vi.useRealTimers())

  it('the trial pays while it runs (verified real mailbox, solo allowance); once it ends the call is 402 and spends nothing', async () => {
    const start = Date.now()
    const tess = await h.seedUser('Tess', `tess-${crypto.randomUUID().slice(0, 8)}@example.com`)
    await h.db.update(users).set({ trialStartedAt: new Date(start), trialEndsAt: new Date(start + 7 * DAY) }).where(eq(users.id, tess.id))
    const first = await gateway(h, { user: tess, body: { plugin: 'agent', prompt: 'hi' }, headers: { accept: 'application/json' } })
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ plugin: 'agent', received: { prompt: 'hi' } })
    expect((await readUsage(h.services.kv, tess.id, 'solo')).used).toBe(1)

    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(start + 7 * DAY + 60_000)
    const res = await gateway(h, { user: tess })
    expect(res.status).toBe(402)
    expect((await challengeOf(res)).body).toMatchObject({ message: expect.stringContaining('no paid plan'), stripe: { checkoutUrl: 'http://localhost:3000/api/stripe/checkout?plan=solo' } })
    expect((await readUsage(h.services.kv, tess.id, 'solo')).used).toBe(0) // nothing spent on the day after the trial
  })

  it('a live trial without a verified real mailbox pays nothing: an unverified email, or a wallet’s derived address', async () => {
    const unverified = await h.seedUser('Una', `una-${crypto.randomUUID().slice(0, 8)}@example.com`, { verified: false })
    const wallet = await h.seedUser('Wal', `0x${crypto.randomUUID().replace(/-/g, '').padEnd(40, '0')}@wallet.localhost`)
    for (const user of [unverified, wallet]) {
      await h.db.update(users).set({ trialStartedAt: new Date(), trialEndsAt: new Date(Date.now() + 7 * DAY) }).where(eq(users.id, user.id))
      expect((await gateway(h, { user })).status).toBe(402)
      expect((await readUsage(h.services.kv, user.id, 'solo')).used).toBe(0)
    }
  })
})

describe.skipIf(!anvilAvailable)('gateway: MPP (anvil chain 8453)', () => {
  it('a paid challenge is accepted: the answer carries Payment-Receipt (the tx hash) and the payment is recorded once', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[0])
    const res = await gateway(h, { headers: { authorization: paid.authorization }, body: { prompt: 'hi' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('payment-receipt')).toBe(paid.hash)
    expect(res.headers.get('x-plugin-id')).toBe('agent')
    expect(await res.json()).toEqual({ plugin: 'agent', received: { prompt: 'hi' } })
    // the credential never reaches the plugin
    expect(plugins.received[0].headers.authorization).toBeUndefined()
    const rows = await h.db.select().from(chainPayments).where(eq(chainPayments.txHash, paid.hash))
    expect(rows).toEqual([
      expect.objectContaining({ purpose: 'mpp', reference: paid.nonce, chainId: 8453, token: chain!.usdc, payer: chain!.payers[0].address, recipient: chain!.recipient, amount: '10000' }),
    ])
  })

  it('X-Payment-Method: mpp with a credential for a streaming call relays the stream with the receipt', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[1], { plugin: 'generate-text' })
    const res = await gateway(h, { headers: { 'x-payment-method': 'mpp', 'x-plugin-id': 'generate-text', authorization: paid.authorization, accept: 'text/event-stream' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('payment-receipt')).toBe(paid.hash)
    expect(await res.text()).toContain('data: [DONE]')
  })

  it('paying more than the price is accepted (the transfer reaches the price)', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[2], { amount: '0.5' })
    const res = await gateway(h, { headers: { authorization: paid.authorization } })
    expect(res.status).toBe(200)
  })

  it('a plugin that fails (5xx) gives the payment back: the record is removed and the same credential is accepted again', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[3])
    plugins.behave('agent', 'fail')
    const failed = await gateway(h, { headers: { authorization: paid.authorization } })
    expect(failed.status).toBe(500)
    expect(await failed.json()).toEqual({ error: 'plugin crashed' })
    expect(failed.headers.get('payment-receipt')).toBeNull()
    expect(await h.db.select().from(chainPayments).where(eq(chainPayments.txHash, paid.hash))).toEqual([])
    plugins.behave('agent', 'json')
    const retried = await gateway(h, { headers: { authorization: paid.authorization } })
    expect(retried.status).toBe(200)
    expect(retried.headers.get('payment-receipt')).toBe(paid.hash)
  })
})
