import { erc20Abi, encodeFunctionData, parseUnits, type Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { PLANS } from '../../../lib/billing/plans'
import { readUsage } from '../../../lib/billing/usage'
import { GatewayConfigError, gatewayPlugins } from '../../../functions/gateway/plugins'
import { nonceKey, type StoredChallenge } from '../../../functions/gateway/mpp'
import { parseConfig } from '../../../lib/config'
import { randomHex } from '../../../lib/crypto'
import { chainPayments } from '../../../schema'
import { anvilAvailable, anvilClients } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import { mppMemo, mppSecret, startPaymentChain, type PaymentChain } from '../../support/payment-chain'
import { askChallenge, challengeOf, credential, gateway, payChallenge, setPlan, startPluginServer, webAppWith } from './helpers'

const CLOSED = 'http://127.0.0.1:9'
let chain: PaymentChain | undefined

const plugins = useFixture(() => startPluginServer())
beforeAll(async () => {
  chain = anvilAvailable ? await startPaymentChain() : undefined
})
afterAll(() => chain?.close())
// No Stripe, no MPP recipient; `stt` has no upstream.
const h = useHarness(() => ({
  env: {
    GATEWAY_PLUGINS: JSON.stringify({ agent: { url: `${plugins.url}/agent` }, tts: { url: `${plugins.url}/tts` } }),
    GATEWAY_UPSTREAM_TIMEOUT_MS: '400',
  },
}))
beforeAll(async () => {
  await setPlan(h, h.users.alice, 'solo')
})
beforeEach(() => plugins.reset())

const alice = () => h.users.alice
const used = async () => (await readUsage(h.services.kv, alice().id, 'solo')).used

describe('gateway: request errors', () => {
  it('an unknown plugin is 400 unknown_plugin, from the header or the body (ids are exact)', async () => {
    for (const opts of [{ headers: { 'x-plugin-id': 'nope' } }, { body: { plugin: 'Agent' } }, { body: { plugin: '' } }]) {
      const res = await gateway(h, opts)
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error: 'unknown_plugin', code: 'UNKNOWN_PLUGIN', message: expect.stringContaining('agent, generate-text, tts, stt') })
      expect(res.headers.get('x-plugin-id')).toBeNull()
    }
  })

  it('an X-Payment-Method other than stripe, mpp or session is 400 with a clear message', async () => {
    const res = await gateway(h, { headers: { 'x-payment-method': 'card' } })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'X-Payment-Method must be one of stripe, mpp, session', code: 'VALIDATION' })
  })

  it('a malformed body is the shared 400 `Invalid JSON body`; a body that is not an object, or a non-string plugin, is 400 VALIDATION', async () => {
    const malformed = await gateway(h, { body: '{"plugin":' })
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
    for (const body of ['[1,2]', '"agent"', 'null', '3']) {
      const res = await gateway(h, { body })
      expect(res.status, body).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'Request body must be a JSON object', code: 'VALIDATION' })
    }
    const plugin = await gateway(h, { body: { plugin: 5 } })
    expect(await plugin.json()).toMatchObject({ error: 'plugin must be a string', code: 'VALIDATION' })
    expect(plugins.received).toHaveLength(0)
  })

  it('a body not sent as JSON is 415', async () => {
    for (const contentType of ['text/plain', '']) {
      const res = await gateway(h, { headers: { 'content-type': contentType } })
      expect(res.status, contentType).toBe(415)
      expect(await res.json()).toEqual({ error: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE' })
    }
  })

  it('a body over 1 MB is 413 before anything else', async () => {
    const res = await gateway(h, { body: { text: 'a'.repeat(1024 * 1024 + 1) } })
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ error: 'Payload too large', code: 'PAYLOAD_TOO_LARGE' })
  })
})

describe('gateway: upstream failures (502 no_plugin, refunded)', () => {
  it('a plugin with no upstream is 502 no_plugin before any payment is asked for', async () => {
    const res = await gateway(h, { body: { plugin: 'stt' } })
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({ error: 'no_plugin', code: 'NO_PLUGIN', message: 'The plugin is unavailable: no upstream is configured for it' })
    expect(res.headers.get('x-plugin-id')).toBe('stt')
  })

  // An upstream refused or never answering: dependencies.test.ts (behind the fault proxy).
  it('a redirect and an answer over 10 MB are 502 no_plugin, refunded', async () => {
    const before = await used()
    plugins.behave('agent', 'redirect')
    const redirect = await gateway(h, { user: alice() })
    expect(await redirect.json()).toMatchObject({ error: 'no_plugin', message: 'The plugin is unavailable: its upstream answered with a redirect' })
    plugins.behave('agent', 'huge')
    const huge = await gateway(h, { user: alice() })
    expect(huge.status).toBe(502)
    expect(await huge.json()).toMatchObject({ error: 'no_plugin', message: 'The plugin is unavailable: its answer is over the 10 MB the gateway relays' })
    expect(await used()).toBe(before)
  })

  it('the plugin’s 5xx is relayed as it is, and the units come back', async () => {
    plugins.behave('agent', 'fail')
    const before = await used()
    const res = await gateway(h, { user: alice() })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'plugin crashed' })
    expect(await used()).toBe(before)
  })

  it('an event stream idle for longer than the timeout ends (what came is delivered; the call is paid)', async () => {
    plugins.behave('agent', 'stall')
    const started = Date.now()
    const res = await gateway(h, { user: alice(), headers: { accept: 'text/event-stream' } })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('data: {"n":1}\n\n')
    expect(Date.now() - started).toBeLessThan(3000)
  })
})

describe('gateway: payment refusals without MPP or Stripe configured', () => {
  it('the 402 says MPP is not configured (no recipient, no nonce, no WWW-Authenticate) and has no checkout', async () => {
    const res = await gateway(h, { body: { plugin: 'tts' } })
    expect(res.status).toBe(402)
    expect(res.headers.get('www-authenticate')).toBeNull()
    expect(await res.json()).toEqual({
      error: 'payment_required',
      code: 'PAYMENT_REQUIRED',
      message: expect.any(String),
      mpp: {
        scheme: 'Payment',
        amount: '0.002',
        currency: 'USDC',
        recipient: null,
        nonce: null,
        expiresAt: null,
        id: null,
        request: null,
        token: null,
        chainId: 8453,
        description: 'MPP payments are not configured on this server',
      },
      stripe: { checkoutUrl: null, amount: '0.002', currency: 'usd' },
    })
  })

  it('with a recipient but no SESSION_SECRET (nothing to bind challenge ids with), MPP is not configured either', async () => {
    const app = webAppWith(h, { PAYMENT_RECIPIENT: '0x000000000000000000000000000000000000dEaD', sessionSecret: undefined })
    const res = await gateway(h, { app })
    expect(res.status).toBe(402)
    expect(res.headers.get('www-authenticate')).toBeNull()
    expect(await res.json()).toMatchObject({ mpp: { recipient: null, nonce: null, id: null, description: 'MPP payments are not configured on this server' } })
  })

  it('an MPP credential is refused with 402 when MPP is not configured', async () => {
    const res = await gateway(h, { headers: { authorization: credential({ id: 'a'.repeat(64) }, `0x${'1'.repeat(64)}`) } })
    expect(res.status).toBe(402)
    expect(await res.json()).toMatchObject({ error: 'payment_required', message: 'MPP payments are not configured on this server' })
  })

  it('a spent daily allowance is 402 payment_required (not the 429 of other routes)', async () => {
    const u = await h.seedUser('Spent', `spent-${crypto.randomUUID()}@example.com`)
    await setPlan(h, u, 'solo')
    const day = new Date().toISOString().slice(0, 10)
    await h.services.kv.incr(`usage:${u.id}:${day}`, PLANS.solo.dailyUnits, 60_000)
    const res = await gateway(h, { user: u })
    expect(res.status).toBe(402)
    expect(await res.json()).toMatchObject({ error: 'payment_required', message: expect.stringContaining('usage allowance and your credits are spent') })
  })
})

describe('gateway: configuration and unexpected failures', () => {
  it('a bad GATEWAY_PLUGINS is refused clearly: parsing names the problem; the route answers 500 internal (GATEWAY_INTERNAL)', async () => {
    const bad = (raw: string) => () => gatewayPlugins(parseConfig({ GATEWAY_PLUGINS: raw }))
    expect(bad('{nope')).toThrow(new GatewayConfigError('not JSON'))
    expect(bad('{"search":{}}')).toThrow(/GATEWAY_PLUGINS is invalid: .*search/)
    expect(bad('{"agent":{"price":"free"}}')).toThrow('GATEWAY_PLUGINS is invalid: agent.price: price must be a USD decimal string such as "0.01"')
    expect(bad('{"agent":{"url":"ftp://x"}}')).toThrow('GATEWAY_PLUGINS is invalid: agent.url: url must be an http(s) URL')
    expect(bad('{"agent":{"streaming":false}}')).toThrow(/agent/)
    const merged = gatewayPlugins(parseConfig({ GATEWAY_PLUGINS: '{"agent":{"url":"https://a.example/run","price":"0.02","auth":true}}' }))
    expect(merged.agent).toEqual({ id: 'agent', url: 'https://a.example/run', price: '0.02', auth: true, streaming: true })
    expect(merged.tts).toEqual({ id: 'tts', url: null, price: '0.002', auth: false, streaming: false })

    const app = webAppWith(h, { GATEWAY_PLUGINS: '{"agent":{"price":"-1"}}' })
    const res = await gateway(h, { app })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'internal', code: 'GATEWAY_INTERNAL', message: expect.stringContaining('GATEWAY_PLUGINS is invalid: agent.price') })
  })

  it('an unexpected failure is 500 internal in the gateway’s shape', async () => {
    const kv = Object.create(h.services.kv, { set: { value: () => Promise.reject(new Error('kv down')) } })
    const app = webAppWith(h, { PAYMENT_RECIPIENT: '0x000000000000000000000000000000000000dEaD' }, { kv })
    const res = await gateway(h, { app })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ error: 'internal', code: 'GATEWAY_INTERNAL', message: 'The call failed unexpectedly' })
  })

  it('the chain not answering is 503 CHAIN_UNAVAILABLE and uses nothing: the nonce stays', async () => {
    const app = webAppWith(h, { PAYMENT_RECIPIENT: '0x000000000000000000000000000000000000dEaD', BASE_RPC_URL: CLOSED })
    const { mpp, params } = await challengeOf(await gateway(h, { app }))
    const res = await gateway(h, { app, headers: { authorization: credential(params, `0x${'ab'.repeat(32)}`) } })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(await res.json()).toEqual({ error: 'Payment verification unavailable: the chain did not answer', code: 'CHAIN_UNAVAILABLE' })
    expect(await h.services.kv.get(nonceKey(mpp.nonce))).toMatchObject({ pluginId: 'agent', amount: '10000' })
  })
})

describe.skipIf(!anvilAvailable)('gateway: refused MPP credentials (anvil chain 8453)', () => {
  let app: ReturnType<typeof webAppWith>
  beforeAll(() => {
    app = webAppWith(h, { ...chain!.env, PAYMENT_TOKEN_DECIMALS: 6 })
  })
  const payer = (i: number) => chain!.payers[i]

  /** Presents `authorization`; expects 402 payment_required with `message` and a fresh challenge. */
  async function refused(authorization: string, message: string | RegExp, plugin = 'agent') {
    const res = await gateway(h, { app, headers: { authorization, 'x-plugin-id': plugin } })
    expect(res.status).toBe(402)
    const { body, mpp, params } = await challengeOf(res)
    expect(body).toMatchObject({ error: 'payment_required', code: 'PAYMENT_REQUIRED' })
    expect((body as unknown as { message: string }).message).toMatch(message)
    expect(mpp.nonce).toMatch(/^[0-9a-f]{64}$/)
    expect(params.nonce).toBe(mpp.nonce)
    return mpp.nonce
  }

  it('underpaid, the wrong token, the wrong recipient, no memo: refused with why, and a fresh challenge', async () => {
    const under = await payChallenge(h, chain!, payer(0), { app, amount: '0.009' })
    expect(await refused(under.authorization, 'Payment refused: The transfer is less than the price')).not.toBe(under.nonce)
    const token = await payChallenge(h, chain!, payer(0), { app, token: chain!.otherToken })
    await refused(token.authorization, 'Payment refused: No transfer of the payment token')
    const to = await payChallenge(h, chain!, payer(0), { app, to: payer(9).address })
    await refused(to.authorization, 'Payment refused: The transfer is not to the payment recipient')
    const noMemo = await payChallenge(h, chain!, payer(0), { app, memo: null })
    await refused(noMemo.authorization, 'Payment refused: The transfer does not carry this payment’s memo')
  })

  it('a payment made for another challenge is refused, and the presented challenge stays usable', async () => {
    const a = await askChallenge(h, { app })
    const b = await askChallenge(h, { app })
    const secret = mppSecret()
    const hashForB = await chain!.pay(payer(1), { amount: '0.01', memo: mppMemo(b.params.id, secret) })
    await refused(credential(a.params, hashForB, secret), /does not carry this payment’s memo/)
    // nothing was used up: A can still be paid, and B's payment still pays B
    const hashForA = await chain!.pay(payer(1), { amount: '0.01', memo: mppMemo(a.params.id, secret) })
    expect((await gateway(h, { app, headers: { authorization: credential(a.params, hashForA, secret) } })).status).toBe(200)
    expect((await gateway(h, { app, headers: { authorization: credential(b.params, hashForB, secret) } })).status).toBe(200)
  })

  it('the bare nonce or the challenge id as the memo (what the server hands out) does not pay: the memo must commit to the payer’s secret', async () => {
    for (const memo of ['nonce', 'id'] as const) {
      const { params } = await askChallenge(h, { app })
      const hash = await chain!.pay(payer(1), { amount: '0.01', memo: `0x${params[memo]}` })
      await refused(credential(params, hash), /does not carry this payment’s memo/)
    }
  })

  it('another plugin’s challenge is refused (and stays usable for its plugin)', async () => {
    const tts = await payChallenge(h, chain!, payer(2), { app, plugin: 'tts' })
    await refused(tts.authorization, 'The challenge was issued for another plugin or price', 'agent')
    const res = await gateway(h, { app, headers: { authorization: tts.authorization, 'x-plugin-id': 'tts' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('payment-receipt')).toBe(tts.hash)
  })

  it('an expired nonce and an unknown one are refused', async () => {
    const paid = await payChallenge(h, chain!, payer(3), { app })
    const stored = await h.services.kv.get<StoredChallenge>(nonceKey(paid.nonce))
    await h.services.kv.set(nonceKey(paid.nonce), { ...stored!, expiresAt: Date.now() - 1 }, { ttlMs: 60_000 })
    await refused(paid.authorization, 'The challenge is unknown, expired or already used')
    await refused(credential({ ...paid.params, id: randomHex(32) }, paid.hash, paid.secret), 'The challenge was not issued by this server, or its fields were changed')
  })

  it('a hash that is not mined, a reverted transfer, and a malformed credential are refused', async () => {
    const { params } = await challengeOf(await gateway(h, { app, headers: { 'x-payment-method': 'mpp' } }))
    await refused(credential(params, `0x${randomHex(32)}`), 'Payment refused: Transaction not found or not mined')
    // the nonce was put back: the same challenge answers the next presentation
    const { client, wallet } = anvilClients(chain!.anvil, payer(4))
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [chain!.recipient, parseUnits('1000000', 6)] })
    const reverted = await wallet.sendTransaction({ to: chain!.usdc, data: `${data}${params.id}` as Hex, gas: 200_000n })
    expect((await client.waitForTransactionReceipt({ hash: reverted })).status).toBe('reverted')
    await refused(credential(params, reverted), 'Payment refused: Transaction reverted')
    await refused('Payment not-base64!', /credential is malformed/)
    await refused(`Payment ${Buffer.from('{"challenge":{}}').toString('base64url')}`, /credential is malformed/)
    await refused(credential(params, 'not-a-hash'), 'Payment refused: Not a transaction hash')
    // without the payer's secret, or with the challenge not echoed (the old `{challenge: {id}}`), it is malformed
    const bare = (payload: object, challenge: object = params) => `Payment ${Buffer.from(JSON.stringify({ challenge, payload })).toString('base64url')}`
    await refused(bare({ type: 'hash', hash: reverted }), /credential is malformed/)
    await refused(bare({ type: 'hash', hash: reverted, secret: '0x1234' }), /credential is malformed/)
    await refused(bare({ type: 'hash', hash: reverted, secret: mppSecret() }, { id: params.id }), /credential is malformed/)
    await refused(bare({ type: 'hash', hash: reverted, secret: mppSecret() }, { ...params, method: 'tempo' }), /credential is malformed/)
  })

  it('a transaction already recorded as a payment is refused', async () => {
    const paid = await payChallenge(h, chain!, payer(5), { app })
    await h.db.insert(chainPayments).values({ txHash: paid.hash, purpose: 'session_deposit', reference: 'x', chainId: 8453, token: chain!.usdc, payer: payer(5).address, recipient: chain!.recipient, amount: '10000' })
    await refused(paid.authorization, 'Payment refused: this transaction has already paid for a call')
  })
})
