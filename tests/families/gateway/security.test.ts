import { createHmac } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type { Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { readUsage } from '../../../lib/billing/usage'
import { randomHex } from '../../../lib/crypto'
import { chainPayments } from '../../../schema'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { anvilAvailable, anvilClients } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import { mppMemo, mppSecret, startPaymentChain, type PaymentChain } from '../../support/payment-chain'
import { postOpen } from '../../support/payment-session'
import { walletProof } from '../../support/wallet-proof'
import { withinOneWindow } from '../../support/requests'
import { askChallenge, credential, gateway, payChallenge, pluginsEnv, setPlan, startPluginServer, webAppWith } from './helpers'

const PLUGIN_OVERRIDES = { tts: { auth: true }, stt: { auth: true, price: '0' } }
let chain: PaymentChain | undefined

const plugins = useFixture(() => startPluginServer())
beforeAll(async () => {
  chain = anvilAvailable ? await startPaymentChain() : undefined
})
// `tts` needs authentication; `stt` is free and needs it too.
const h = useHarness(() => ({ env: { ...pluginsEnv(plugins, PLUGIN_OVERRIDES), ...chain?.env } }))
beforeAll(async () => {
  await setPlan(h, h.users.alice, 'solo')
  await setPlan(h, h.users.bob, 'solo')
})
afterAll(() => chain?.close())
beforeEach(() => plugins.reset())

const used = async (userId: string) => (await readUsage(h.services.kv, userId, 'solo')).used

describe('gateway: authentication', () => {
  it('a plugin with auth: true refuses an anonymous call with 401 `Unauthorized`; a session passes', async () => {
    const anonymous = await gateway(h, { body: { plugin: 'tts' } })
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED', message: expect.stringContaining('needs a session or a payment proof') })
    const signedIn = await gateway(h, { user: h.users.alice, body: { plugin: 'tts' } })
    expect(signedIn.status).toBe(200)
    expect(plugins.received).toHaveLength(1)
  })

  it('with auth: true, an MPP credential is the authentication: it goes on to be checked as a payment (402, not 401)', async () => {
    const res = await gateway(h, { body: { plugin: 'tts' }, headers: { authorization: credential({ id: randomHex(32) }, `0x${randomHex(32)}`) } })
    expect(res.status).toBe(402)
    expect(await res.json()).toMatchObject({ error: 'payment_required' })
  })

  it('a free plugin with auth: true needs a session: a payment header does not stand in for one', async () => {
    const withCredential = await gateway(h, { body: { plugin: 'stt' }, headers: { authorization: credential({ id: randomHex(32) }, `0x${randomHex(32)}`) } })
    expect(withCredential.status).toBe(401)
    const withSessionHeaders = await gateway(h, { body: { plugin: 'stt' }, headers: { 'x-session-id': 's', 'x-wallet-address': '0x0' } })
    expect(withSessionHeaders.status).toBe(401)
    expect((await gateway(h, { user: h.users.bob, body: { plugin: 'stt' } })).status).toBe(200)
  })

  it('a forged or expired session cookie is no session: anonymous, so 402 (and 401 for auth plugins), nobody charged', async () => {
    const forged = { ...h.users.alice, cookie: `service-session=${randomHex(32)}` }
    const before = await used(h.users.alice.id)
    const res = await gateway(h, { user: forged })
    expect(res.status).toBe(402)
    expect(await res.json()).toMatchObject({ message: expect.stringContaining('no payment came with the call') })
    expect((await gateway(h, { user: forged, body: { plugin: 'tts' } })).status).toBe(401)
    expect(await used(h.users.alice.id)).toBe(before)
  })

  it('a page on a foreign origin cannot spend a signed-in user’s allowance: the cookie is ignored there', async () => {
    const before = await used(h.users.alice.id)
    const res = await gateway(h, { user: h.users.alice, headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(402)
    expect(await used(h.users.alice.id)).toBe(before)
    expect(plugins.received).toHaveLength(0)
  })

  it('each caller pays from their own allowance', async () => {
    const [a, b] = [await used(h.users.alice.id), await used(h.users.bob.id)]
    expect((await gateway(h, { user: h.users.bob })).status).toBe(200)
    expect(await used(h.users.bob.id)).toBe(b + 1)
    expect(await used(h.users.alice.id)).toBe(a)
  })

  it('nothing of the caller’s request but the body and Accept reaches the plugin: no cookie, no Authorization, no payment headers', async () => {
    const res = await gateway(h, {
      user: h.users.alice,
      body: { plugin: 'agent', q: 1 },
      headers: { accept: 'application/json', 'x-payment-method': 'stripe', 'x-session-id': 'sess', 'x-wallet-address': '0xabc', 'x-forwarded-for': '10.0.0.1', authorization: 'Bearer sk_live_x' },
    })
    expect(res.status).toBe(200)
    const { headers, body } = plugins.received[0]
    expect(body).toEqual({ q: 1 })
    for (const name of ['cookie', 'authorization', 'origin', 'x-payment-method', 'x-session-id', 'x-wallet-address', 'x-plugin-id', 'x-forwarded-for', 'cf-connecting-ip']) {
      expect(headers[name], name).toBeUndefined()
    }
    expect(headers.accept).toBe('application/json')
  })
})

describe('gateway: CORS for the dashboard', () => {
  it('a preflight from the dashboard allows the gateway’s headers; answers expose the payment headers; other origins get none', async () => {
    const preflight = (origin: string) =>
      h.web.request('/api/v1/gateway', {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-plugin-id,x-payment-method,authorization' },
      })
    const ok = await preflight('http://localhost:3000')
    expect(ok.status).toBe(204)
    const allowed = (ok.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',')
    expect(allowed).toEqual(expect.arrayContaining(['x-plugin-id', 'x-payment-method', 'x-session-id', 'x-wallet-address', 'authorization']))
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-headers')).toBeNull()
    const res = await gateway(h, { headers: { origin: 'http://localhost:3000' } })
    expect(res.status).toBe(402)
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(',')
    expect(exposed).toEqual(expect.arrayContaining(['www-authenticate', 'payment-receipt', 'x-session-remaining', 'x-plugin-id']))
  })
})

describe.skipIf(!anvilAvailable)('gateway: MPP replay (anvil chain 8453)', () => {
  it('one credential pays for one call: presented again it is refused', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[0])
    expect((await gateway(h, { headers: { authorization: paid.authorization } })).status).toBe(200)
    const again = await gateway(h, { headers: { authorization: paid.authorization } })
    expect(again.status).toBe(402)
    expect(await again.json()).toMatchObject({ error: 'payment_required', message: 'The challenge is unknown, expired or already used' })
    expect(plugins.received).toHaveLength(1)
  })

  it('presented five times at once, exactly one call is served', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[1])
    const answers = await Promise.all(Array.from({ length: 5 }, () => gateway(h, { headers: { authorization: paid.authorization } })))
    expect(answers.map((r) => r.status).sort()).toEqual([200, 402, 402, 402, 402])
    expect(plugins.received).toHaveLength(1)
  })

  it('a paid transaction presented with a nonce the server never issued is refused', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[2])
    const res = await gateway(h, { headers: { authorization: credential({ ...paid.params, id: randomHex(32) }, paid.hash) } })
    expect(res.status).toBe(402)
    // and the real credential still works once
    expect((await gateway(h, { headers: { authorization: paid.authorization } })).status).toBe(200)
  })
})

/** The gateway's 402 envelope for a refused MPP credential: spec fields, a fresh challenge, never cached, nothing served. */
async function expectPaymentRequired(res: Response, message: string | RegExp) {
  expect(res.status).toBe(402)
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.headers.get('payment-receipt')).toBeNull()
  expect(res.headers.get('www-authenticate')).toMatch(/^Payment /)
  const body = (await res.json()) as { message: string }
  expect(body).toEqual({
    error: 'payment_required',
    code: 'PAYMENT_REQUIRED',
    message: expect.any(String),
    mpp: expect.objectContaining({ scheme: 'Payment', nonce: expect.stringMatching(/^[0-9a-f]{64}$/), id: expect.stringMatching(/^[0-9a-f]{64}$/) }),
    stripe: expect.objectContaining({ currency: 'usd' }),
  })
  expect(body.message).toMatch(message)
}

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

describe.skipIf(!anvilAvailable)('gateway: an MPP payment is bound to its payer (anvil chain 8453)', () => {
  it('a front-runner presenting the payer’s mined transaction first is refused, however it builds its credential; the payer is then served', async () => {
    const payer = chain!.payers[3]
    const paid = await payChallenge(h, chain!, payer)
    // What anyone watching transfers to the recipient sees: the hash, and the calldata ending with the memo.
    const seen = await anvilClients(chain!.anvil).client.getTransaction({ hash: paid.hash })
    const tail = seen.input.slice(-64)
    expect(`0x${tail}`).toBe(mppMemo(paid.id, paid.secret))
    const attempts = [
      // the calldata's 32 bytes as the challenge id and the public hash (the old credential, which used to pay)
      `Payment ${b64json({ challenge: { id: tail }, payload: { type: 'hash', hash: paid.hash } })}`,
      `Payment ${b64json({ challenge: { id: tail }, payload: { type: 'hash', hash: paid.hash, secret: `0x${tail}` } })}`,
    ]
    // a challenge of its own, with a secret of its own or the memo itself
    const own = await askChallenge(h)
    attempts.push(credential(own.params, paid.hash), credential(own.params, paid.hash, `0x${tail}`))
    // even knowing the payer's challenge (its 402 leaked): without the payer's secret the memo does not open
    attempts.push(credential(paid.params, paid.hash), credential(paid.params, paid.hash, `0x${tail}`))
    for (const authorization of attempts) {
      await expectPaymentRequired(await gateway(h, { headers: { authorization } }), /credential is malformed|not issued by this server|does not carry this payment’s memo/)
    }
    expect(plugins.received).toHaveLength(0)
    expect(await h.db.select().from(chainPayments).where(eq(chainPayments.txHash, paid.hash))).toEqual([])

    // nothing of the payer's was used up: its own credential pays, and the payment is recorded as the payer's
    const res = await gateway(h, { headers: { authorization: paid.authorization }, body: { q: 1 } })
    expect(res.status).toBe(200)
    expect(res.headers.get('payment-receipt')).toBe(paid.hash)
    expect(plugins.received).toHaveLength(1)
    const [row] = await h.db.select().from(chainPayments).where(eq(chainPayments.txHash, paid.hash))
    expect(row).toMatchObject({ purpose: 'mpp', reference: paid.nonce, payer: payer.address })
  })

  it('a challenge whose fields were changed is refused (its id is their HMAC), and using it so spends nothing', async () => {
    const paid = await payChallenge(h, chain!, chain!.payers[4])
    const request = JSON.parse(Buffer.from(paid.params.request, 'base64url').toString()) as { amount: string; recipient: string; methodDetails: Record<string, unknown> }
    const flip = (hex: string) => hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0')
    const tampered = [
      { ...paid.params, request: b64json({ ...request, amount: '1' }) },
      { ...paid.params, request: b64json({ ...request, recipient: chain!.payers[9].address }) },
      { ...paid.params, request: b64json({ ...request, methodDetails: { ...request.methodDetails, plugin: 'tts' } }) },
      { ...paid.params, request: b64json({ ...request, methodDetails: { ...request.methodDetails, nonce: randomHex(32) } }) },
      { ...paid.params, expires: new Date(Date.now() + 86_400_000).toISOString() },
      { ...paid.params, id: flip(paid.params.id) },
    ]
    for (const challenge of tampered) {
      const res = await gateway(h, { headers: { authorization: credential(challenge, paid.hash, paid.secret) } })
      await expectPaymentRequired(res, 'The challenge was not issued by this server, or its fields were changed')
    }
    // an underpayment dressed as a cheaper challenge: refused before any chain read
    const own = await askChallenge(h)
    const secret = mppSecret()
    const cheapHash = await chain!.pay(chain!.payers[4], { amount: '0.000001', memo: mppMemo(own.params.id, secret) })
    const cheaper = { ...own.params, request: b64json({ ...JSON.parse(Buffer.from(own.params.request, 'base64url').toString()), amount: '1' }) }
    await expectPaymentRequired(await gateway(h, { headers: { authorization: credential(cheaper, cheapHash, secret) } }), /not issued by this server/)
    expect(plugins.received).toHaveLength(0)
    expect((await gateway(h, { headers: { authorization: paid.authorization } })).status).toBe(200)
  })

  it('a challenge of a cheaper plugin does not pay a pricier one, nor its own plugin once priced above it', async () => {
    // generate-text costs 0.005, agent 0.01
    const cheap = await payChallenge(h, chain!, chain!.payers[5], { plugin: 'generate-text' })
    const onAgent = await gateway(h, { body: { plugin: 'agent' }, headers: { authorization: cheap.authorization } })
    await expectPaymentRequired(onAgent, 'The challenge was issued for another plugin or price')
    // rewritten to name the pricier plugin, the challenge is no longer the server's
    const request = JSON.parse(Buffer.from(cheap.params.request, 'base64url').toString()) as { methodDetails: Record<string, unknown> }
    const renamed = { ...cheap.params, request: b64json({ ...request, methodDetails: { ...request.methodDetails, plugin: 'agent' } }) }
    const rewritten = await gateway(h, { body: { plugin: 'agent' }, headers: { authorization: credential(renamed, cheap.hash, cheap.secret) } })
    await expectPaymentRequired(rewritten, 'The challenge was not issued by this server, or its fields were changed')
    // the operator raises generate-text to 0.02: the challenge issued at 0.005 no longer pays it
    const raised = webAppWith(h, { GATEWAY_PLUGINS: pluginsEnv(plugins, { ...PLUGIN_OVERRIDES, 'generate-text': { price: '0.02' } }).GATEWAY_PLUGINS })
    const atNewPrice = await gateway(h, { app: raised, body: { plugin: 'generate-text' }, headers: { authorization: cheap.authorization } })
    await expectPaymentRequired(atNewPrice, 'The challenge was issued for another plugin or price')
    expect(plugins.received).toHaveLength(0)
    // at the price it was issued for, it pays its own plugin
    const own = await gateway(h, { body: { plugin: 'generate-text' }, headers: { authorization: cheap.authorization } })
    expect(own.status).toBe(200)
    expect(own.headers.get('payment-receipt')).toBe(cheap.hash)
  })

  it('with SESSION_SECRET leaked, a forged challenge still needs a nonce the server issued and the plugin’s price', async () => {
    const secretKey = h.services.config.sessionSecret!
    const forge = (request: string, expires: string) => createHmac('sha256', secretKey).update(`gateway-mpp-challenge|evm|charge|${request}|${expires}`).digest('hex')
    const real = await askChallenge(h)
    const terms = JSON.parse(Buffer.from(real.params.request, 'base64url').toString()) as { methodDetails: Record<string, unknown> }
    const secret = mppSecret()
    const forged: [string, string, string][] = [
      // the live nonce at a lower price
      [b64json({ ...terms, amount: '1' }), '0.000001', 'The challenge was issued for another plugin or price'],
      // a nonce never issued, at the full price
      [b64json({ ...terms, methodDetails: { ...terms.methodDetails, nonce: randomHex(32) } }), '0.01', 'The challenge is unknown, expired or already used'],
    ]
    for (const [request, amount, message] of forged) {
      const id = forge(request, real.params.expires)
      const hash: Hex = await chain!.pay(chain!.payers[6], { amount, memo: mppMemo(id, secret) })
      const res = await gateway(h, { headers: { authorization: credential({ ...real.params, id, request }, hash, secret) } })
      await expectPaymentRequired(res, message)
    }
    expect(plugins.received).toHaveLength(0)
  })
})

describe.skipIf(!anvilAvailable)('gateway: a transfer pays one purpose (anvil chain 8453)', () => {
  const recorded = (hash: string) => h.db.select().from(chainPayments).where(eq(chainPayments.txHash, hash.toLowerCase()))
  const reasonOf = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> })

  it('a call’s MPP payment cannot open a payment session first: nobody else can claim it, its payer is refused (402 `memo_bound`); the gateway then serves the call', async () => {
    const payer = chain!.payers[7]
    const paid = await payChallenge(h, chain!, payer)
    const claim = { walletAddress: payer.address, txHash: paid.hash }
    // Someone watching the chain: the payer's wallet cannot be proven without its key, and a wallet the watcher
    // does prove did not pay (refused from the receipt, before the calldata is read).
    const thief = privateKeyToAccount(generatePrivateKey())
    expect((await reasonOf(await postOpen(h.web, claim))).body).toMatchObject({ code: 'SIGNATURE_REQUIRED' })
    expect((await reasonOf(await postOpen(h.web, claim, thief))).body).toMatchObject({ code: 'SIGNATURE_INVALID' })
    const own = await walletProof(h.web, 'paymentSession', thief.address, thief)
    expect((await reasonOf(await postOpen(h.web, { ...claim, ...own }))).body).toMatchObject({ code: 'ADDRESS_MISMATCH' })
    expect(await reasonOf(await postOpen(h.web, { walletAddress: thief.address, txHash: paid.hash }, thief))).toMatchObject({
      status: 402,
      body: { code: 'DEPOSIT_INVALID', reason: 'wrong_payer' },
    })
    // The payer itself (a client posting the hash to the wrong place): the payment names a call, not a deposit.
    expect(await reasonOf(await postOpen(h.web, claim, payer))).toEqual({
      status: 402,
      body: { error: 'The transfer carries a payment memo: it pays a gateway call', code: 'DEPOSIT_INVALID', reason: 'memo_bound' },
    })
    expect(await recorded(paid.hash)).toEqual([])

    const res = await gateway(h, { headers: { authorization: paid.authorization } })
    expect(res.status).toBe(200)
    expect(res.headers.get('payment-receipt')).toBe(paid.hash)
    expect(await recorded(paid.hash)).toMatchObject([{ purpose: 'mpp', reference: paid.nonce, payer: payer.address }])
  })

  it('a plain transfer (a deposit) never pays a call, before or after it opened a session, whatever the credential; the challenge stays usable', async () => {
    const payer = chain!.payers[8]
    const deposit = await chain!.pay(payer, { amount: '1' })
    const { params } = await askChallenge(h)
    const secret = mppSecret()
    for (const authorization of [credential(params, deposit, secret), credential(params, deposit, `0x${params.id}`)]) {
      await expectPaymentRequired(await gateway(h, { headers: { authorization } }), 'Payment refused: The transfer does not carry this payment’s memo')
    }
    expect((await postOpen(h.web, { walletAddress: payer.address, txHash: deposit }, payer)).status).toBe(201)
    await expectPaymentRequired(await gateway(h, { headers: { authorization: credential(params, deposit, secret) } }), /does not carry this payment’s memo/)
    expect(plugins.received).toHaveLength(0)
    expect(await recorded(deposit)).toMatchObject([{ purpose: 'session_deposit' }])
    // the challenge was not used up: paid as MPP asks, it pays
    const hash = await chain!.pay(payer, { amount: '0.01', memo: mppMemo(params.id, secret) })
    expect((await gateway(h, { headers: { authorization: credential(params, hash, secret) } })).status).toBe(200)
  })
})

describe('gateway: 402 answers are never cached', () => {
  it('an anonymous 402 (no credential, so no blanket no-store), a refused credential and a payment session refusal all say Cache-Control: no-store', async () => {
    const anonymous = await gateway(h)
    expect(anonymous.status).toBe(402)
    expect(anonymous.headers.get('cache-control')).toBe('no-store')
    const refusedCredential = await gateway(h, { headers: { authorization: 'Payment nonsense' } })
    expect(refusedCredential.status).toBe(402)
    expect(refusedCredential.headers.get('cache-control')).toBe('no-store')
    const sessionRequired = await gateway(h, { headers: { 'x-payment-method': 'session' } })
    expect(sessionRequired.status).toBe(402)
    expect(await sessionRequired.json()).toMatchObject({ error: 'session_required' })
    expect(sessionRequired.headers.get('cache-control')).toBe('no-store')
  })
})

describe('gateway: rate limit', () => {
  it('is limited to 100 requests per minute per client address (spec "Limits")', async () => {
    await withinOneWindow(60)
    const ip = '203.0.113.200'
    const statuses: number[] = []
    // anonymous calls of the free `stt` that needs a session: refused (401) after the limiter, nothing else spent
    for (let i = 0; i < 100; i++) statuses.push((await gateway(h, { ip, body: { plugin: 'stt' } })).status)
    expect(new Set(statuses)).toEqual(new Set([401]))
    const limited = await gateway(h, { ip, body: { plugin: 'stt' } })
    expect(limited.status).toBe(429)
    expect(await limited.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(limited.headers.get('retry-after')).toBeTruthy()
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
    expect((await gateway(h, { ip: '203.0.113.201', body: { plugin: 'stt' } })).status).toBe(401)
    // an unknown plugin is refused before the limiter: it costs nothing and needs no store
    expect((await gateway(h, { ip, body: { plugin: 'nope' } })).status).toBe(400)
  })
})
