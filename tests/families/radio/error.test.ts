import { describe, expect, it, vi } from 'vitest'
import type { Reader } from '../../../lib/db/rls'
import { anvilAvailable } from '../../support/anvil'
import { HOLDING, ONE_TOKEN, radioWorld } from './helpers'
import { useFixture } from '../../support/harness'
import { underFault } from '../../support/fault-proxy'
import { publishingThrough, startQueueFault } from '../../support/queue-fault'

// anvil, contract deployments and the stores: slow to start when other suites share the machine
const w = useFixture(() => radioWorld(), { timeout: 180_000 })

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any })

describe.skipIf(!anvilAvailable)('radio: create refusals', () => {
  it('400 for a missing or malformed wallet, a malformed txHash, a city over 80 characters after trimming, and bad JSON', async () => {
    const wallet = await w.smartWallet()
    const cases: Array<[unknown, string]> = [
      [{}, 'wallet is required'],
      [{ wallet: '0x123' }, 'Invalid wallet address'],
      [{ wallet: `${wallet}00` }, 'Invalid wallet address'],
      [{ wallet, txHash: '0xdead' }, 'Invalid txHash'],
      [{ wallet, city: 'x'.repeat(81) }, 'city must be at most 80 characters'],
      [{ wallet, name: 'n'.repeat(65) }, 'name must be at most 64 characters'],
      [{ wallet, message: 'm', signature: 'not hex' }, 'Invalid signature'],
      [{ wallet, message: 'm'.repeat(8193), signature: '0x00' }, 'Message too long'],
    ]
    for (const [body, error] of cases) {
      const { status, body: answer } = await json(await w.create(body as never))
      expect(status, JSON.stringify(body)).toBe(400)
      expect(answer).toMatchObject({ error, code: 'VALIDATION' })
    }
    expect(await json(await w.create('{"wallet":'))).toEqual({ status: 400, body: { error: 'Invalid JSON body', code: 'INVALID_JSON' } })
    // 80 characters once trimmed is fine (and blank padding is not stored).
    await w.grantGuestPass(wallet)
    const ok = await json(await w.create({ wallet, city: `  ${'c'.repeat(80)}  ` }))
    expect(ok.status).toBe(200)
    expect((await w.session(ok.body.session.id)).city).toBe('c'.repeat(80))
  })

  it('an EOA is 403 `SMART_WALLET_REQUIRED`, even holding the station token and proving itself; so is an undeployed smart account', async () => {
    const eoa = w.chain.payers[0].address
    await w.giveStation(eoa, HOLDING)
    // `create` adds the EOA's own proof (personal_sign): the proof holds, the policy refuses.
    expect(await json(await w.create({ wallet: eoa }))).toEqual({ status: 403, body: { error: 'A smart wallet is required', code: 'SMART_WALLET_REQUIRED' } })
    expect((await w.create({ wallet: await w.counterfactual() })).status).toBe(403)
    expect(await w.sessionsOf(eoa)).toEqual([])
  })

  it('no holding, no pass, no txHash: 402 `FEE_REQUIRED` saying what to pay and where', async () => {
    const wallet = await w.smartWallet()
    await w.giveStation(wallet, HOLDING - 1n) // one base unit short of 2,500,000 tokens
    expect(await json(await w.create({ wallet }))).toEqual({
      status: 402,
      body: {
        error: 'Hold 2,500,000 station tokens, have a guest pass, or pay the 5 USDC session fee',
        code: 'FEE_REQUIRED',
        fee: { amount: '5', currency: 'USDC', token: w.chain.usdc, recipient: w.chain.recipient, chainId: 8453 },
      },
    })
  })

  it('an expired guest pass does not count', async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet, new Date(Date.now() - 1000))
    expect((await w.create({ wallet })).status).toBe(402)
  })

  it('a transfer that does not pay the fee is 402 `PAYMENT_REJECTED` with its reason, and nothing is recorded', async () => {
    const wallet = await w.smartWallet()
    const other = await w.smartWallet()
    const cases: Array<[() => Promise<string>, string]> = [
      [() => w.pay(wallet, { amount: '4.99' }), 'underpaid'],
      [() => w.pay(wallet, { to: w.chain.payers[3].address }), 'wrong_recipient'],
      [() => w.pay(wallet, { token: w.chain.otherToken }), 'wrong_token'],
      [() => w.pay(other), 'wrong_payer'],
      [async () => `0x${'ab'.repeat(32)}`, 'not_found'],
      // a direct transfer with a memo after its arguments pays the gateway call the memo names
      [() => w.pay(wallet, { memo: `0x${'cd'.repeat(32)}` }), 'memo_bound'],
    ]
    for (const [hash, reason] of cases) {
      const txHash = await hash()
      const { status, body } = await json(await w.create({ wallet, txHash }))
      expect(status, reason).toBe(402)
      expect(body).toMatchObject({ code: 'PAYMENT_REJECTED', reason })
      expect(await w.payment(txHash)).toBeUndefined()
    }
    expect(await w.sessionsOf(wallet)).toEqual([])
  })

  it('a txHash pays once: used again (after that session ended) is 409 `PAYMENT_ALREADY_USED`', async () => {
    const wallet = await w.smartWallet()
    const txHash = await w.pay(wallet)
    const first = await json(await w.create({ wallet, txHash }))
    expect(first.status).toBe(200)
    expect((await w.end(first.body.stream.id, first.body.session.accessToken)).status).toBe(200)
    expect(await json(await w.create({ wallet, txHash: txHash.toUpperCase().replace('0X', '0x') }))).toEqual({
      status: 409,
      body: { error: 'This transaction has already been used', code: 'PAYMENT_ALREADY_USED' },
    })
  })

  it('one current session per wallet: a second create is 409 `SESSION_ACTIVE`; Mux is not asked', async () => {
    const s = await w.started()
    const calls = w.mux.requests.filter((r) => r.method === 'POST').length
    expect(await json(await w.create({ wallet: s.walletAddress }))).toEqual({ status: 409, body: { error: 'This wallet already has an active session', code: 'SESSION_ACTIVE' } })
    expect(w.mux.requests.filter((r) => r.method === 'POST').length).toBe(calls)
  })

  it('concurrent creates for one wallet: exactly one wins, the others are 409, one Mux stream is made', async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet)
    const posts = w.mux.requests.filter((r) => r.method === 'POST').length
    const results = await Promise.all(Array.from({ length: 6 }, () => w.create({ wallet }).then(json)))
    expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.body))).toEqual([200, 409, 409, 409, 409, 409])
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.code).toBe('SESSION_ACTIVE')
    expect((await w.sessionsOf(wallet)).filter((s) => s.status === 'active')).toHaveLength(1)
    expect(w.mux.requests.filter((r) => r.method === 'POST').length).toBe(posts + 1)
  })

  it('concurrent creates paying with one txHash: one session, one payment record', async () => {
    const wallet = await w.smartWallet()
    const txHash = await w.pay(wallet)
    const results = await Promise.all(Array.from({ length: 4 }, () => w.create({ wallet, txHash }).then(json)))
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    for (const r of results.filter((x) => x.status !== 200)) expect(r.status).toBe(409)
    expect(await w.sessionsOf(wallet)).toHaveLength(1)
    expect(await w.payment(txHash)).toBeDefined()
  })

  it("a session past its expiry no longer holds the slot: the next create retires it (`auto-ended`, Mux disabled)", async () => {
    const s = await w.started()
    await w.expireNow(s.session.id)
    const next = await json(await w.create({ wallet: s.walletAddress }))
    expect(next.status).toBe(200)
    expect(await w.session(s.session.id)).toMatchObject({ status: 'auto-ended', endedAt: expect.any(Date) })
    expect(w.mux.streams.get(s.stream.id)!.status).toBe('disabled')
  })

  it('Mux down at creation: 503 `STREAMING_UNAVAILABLE`, the session and its payment removed; the fee can be presented again', async () => {
    const wallet = await w.smartWallet()
    const txHash = await w.pay(wallet)
    w.mux.fail(500)
    expect(await json(await w.create({ wallet, txHash }))).toEqual({ status: 503, body: { error: 'Streaming provider unavailable', code: 'STREAMING_UNAVAILABLE' } })
    expect(await w.sessionsOf(wallet)).toEqual([])
    expect(await w.payment(txHash)).toBeUndefined()
    expect((await w.create({ wallet, txHash })).status).toBe(200)
  })

  it('a lost expiry publish does not fail the create (the sweep ends it)', async () => {
    w.failPublishes(1)
    const s = await w.started()
    expect((await w.session(s.session.id)).status).toBe('active')
  })

  it('QStash refusing, blackholed or answering 503 when the expiry is published: the session starts in time, and the sweep ends it at its expiry', async () => {
    const KEY = 'radio-queue-fault-key'
    const q = await startQueueFault((req) => w.h.web.fetch(req), KEY)
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      for (const fault of ['refuse', 'blackhole', { kind: 'status', status: 503 }] as const) {
        const { value: s, ms } = await underFault(q.proxy, fault, () => publishingThrough(w.h.services, q.queue(400), () => w.started()))
        expect(ms, JSON.stringify(fault)).toBeLessThan(400 + 4000) // the publish's deadline, and the chain and Mux calls
        expect((await w.session(s.session.id)).status).toBe('active')
        expect(q.qstash.published.some((m) => m.body.includes(s.session.id))).toBe(false)
        await w.expireNow(s.session.id)
        expect((await json(await w.expire({}))).body.ended).toBeGreaterThanOrEqual(1)
        expect((await w.session(s.session.id)).status).toBe('auto-ended')
      }
      expect(warned.mock.calls.filter(([l]) => JSON.parse(String(l)).event === 'radio.expiry_not_scheduled')).toHaveLength(3)
    } finally {
      warned.mockRestore()
      await q.close()
    }
  }, 60_000)

  it('no wallet proof: 401 `SIGNATURE_REQUIRED` before any chain call or database read (even with the chain down); half a proof likewise', async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet)
    const required = { status: 401, body: { error: 'Wallet proof required: `message` and `signature`', code: 'SIGNATURE_REQUIRED' } }
    const proof = await w.proof(wallet)
    await w.withConfig({ BASE_RPC_URL: 'http://127.0.0.1:9' }, async () => {
      expect(await json(await w.post({ wallet }))).toEqual(required)
    })
    expect(await json(await w.post({ wallet, message: proof.message }))).toEqual(required)
    expect(await json(await w.post({ wallet, signature: proof.signature, message: '' }))).toEqual(required)
    expect(await w.sessionsOf(wallet)).toEqual([])
  })

  it('a signature that is none (stray bytes, a broken ERC-6492 wrapper): 401 `SIGNATURE_INVALID`, nothing started', async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet)
    for (const signature of ['0x00', `0x${'ab'.repeat(65)}`, `0x${'00'.repeat(10)}${'6492'.repeat(16)}`]) {
      const { message } = await w.proof(wallet)
      expect(await json(await w.post({ wallet, message, signature })), signature).toEqual({ status: 401, body: { error: 'Invalid signature', code: 'SIGNATURE_INVALID' } })
    }
    expect(await w.sessionsOf(wallet)).toEqual([])
  })

  it("the chain RPC down while a smart wallet's proof is checked: 503 `Chain unavailable`, the nonce spent, nothing started", async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet)
    const proof = await w.proof(wallet)
    await w.withConfig({ BASE_RPC_URL: 'http://127.0.0.1:9' }, async () => {
      expect(await json(await w.post({ wallet, ...proof }))).toEqual({ status: 503, body: { error: 'Chain unavailable', code: 'CHAIN_UNAVAILABLE' } })
    })
    expect((await json(await w.post({ wallet, ...proof }))).body.code).toBe('NONCE_INVALID')
    expect((await w.create({ wallet })).status).toBe(200)
  })

  it('the chain RPC down: 503 `Chain unavailable`, nothing written, Mux not asked', async () => {
    const wallet = await w.smartWallet()
    const txHash = await w.pay(wallet)
    const posts = w.mux.requests.filter((r) => r.method === 'POST').length
    await w.withConfig({ BASE_RPC_URL: 'http://127.0.0.1:9' }, async () => {
      expect(await json(await w.create({ wallet, txHash }))).toEqual({ status: 503, body: { error: 'Chain unavailable', code: 'CHAIN_UNAVAILABLE' } })
    })
    expect(await w.sessionsOf(wallet)).toEqual([])
    expect(await w.payment(txHash)).toBeUndefined()
    expect(w.mux.requests.filter((r) => r.method === 'POST').length).toBe(posts)
  })

  it('Mux not configured: 503; the fee needed without PAYMENT_RECIPIENT: 503; without SESSION_SECRET: 500', async () => {
    const wallet = await w.smartWallet()
    await w.withConfig({ MUX_TOKEN_SECRET: undefined }, async () => {
      expect(await json(await w.create({ wallet }))).toEqual({ status: 503, body: { error: 'Streaming not configured', code: 'NOT_CONFIGURED' } })
    })
    await w.withConfig({ PAYMENT_RECIPIENT: undefined }, async () => {
      expect(await json(await w.create({ wallet }))).toEqual({ status: 503, body: { error: 'Radio payments not configured', code: 'NOT_CONFIGURED' } })
    })
    await w.withConfig({ sessionSecret: undefined }, async () => {
      expect(await json(await w.create({ wallet }))).toEqual({ status: 500, body: { error: 'Session secret not configured', code: 'MISCONFIGURED' } })
    })
    expect(await w.sessionsOf(wallet)).toEqual([])
  })
})

describe.skipIf(!anvilAvailable)('radio: end refusals', () => {
  it('`archive` must be a boolean; a body that is not an object is 400', async () => {
    const s = await w.started()
    expect(await json(await w.end(s.stream.id, s.session.accessToken, { archive: 'yes' }))).toMatchObject({ status: 400, body: { error: 'archive must be a boolean', code: 'VALIDATION' } })
    expect((await w.end(s.stream.id, s.session.accessToken, '[1]')).status).toBe(400)
    expect((await w.end(s.stream.id, s.session.accessToken, '{"archive":')).status).toBe(400)
    expect((await w.session(s.session.id)).status).toBe('active')
  })

  it('ended one way, then asked the other: 409 `SESSION_ENDED` with its status; an auto-ended session likewise', async () => {
    const s = await w.started()
    expect((await w.end(s.stream.id, s.session.accessToken)).status).toBe(200)
    expect(await json(await w.end(s.stream.id, s.session.accessToken, { archive: true }))).toEqual({
      status: 409,
      body: { error: 'Session already ended', code: 'SESSION_ENDED', status: 'ended' },
    })
    const t = await w.started()
    await w.expireNow(t.session.id)
    expect((await w.expire({ sessionId: t.session.id })).status).toBe(200)
    expect((await json(await w.end(t.stream.id, t.session.accessToken))).body).toMatchObject({ code: 'SESSION_ENDED', status: 'auto-ended' })
  })

  it('Mux down while ending: 503, the session unchanged; a retry once Mux is back ends it', async () => {
    const s = await w.started()
    w.mux.connect(s.stream.id)
    w.mux.down()
    try {
      expect(await json(await w.end(s.stream.id, s.session.accessToken))).toEqual({ status: 503, body: { error: 'Streaming provider unavailable', code: 'STREAMING_UNAVAILABLE' } })
      expect((await w.session(s.session.id)).status).toBe('active')
    } finally {
      w.mux.up()
    }
    // Mux failing midway (disabled, then the asset delete fails): the retry finishes the job.
    w.mux.nextAnswers(0, 500)
    const first = await w.end(s.stream.id, s.session.accessToken)
    expect(first.status).toBe(503)
    const retry = await json(await w.end(s.stream.id, s.session.accessToken))
    expect(retry.status).toBe(200)
    expect(w.mux.streams.has(s.stream.id)).toBe(false)
  })
})

describe.skipIf(!anvilAvailable)('radio: the live view when Mux fails', () => {
  async function liveSession(name: string) {
    const s = await w.started({ name })
    w.mux.connect(s.stream.id)
    expect((await w.webhook(w.mux.event('video.live_stream.active', w.mux.streams.get(s.stream.id)!))).status).toBe(200)
    return s
  }

  it('Mux down: 200 `degraded` from the `live` session records, with an `error`; stream keys still null', async () => {
    const s = await liveSession('Cached DJ')
    const waiting = await w.started({ name: 'Not broadcasting' }) // `active`, never live: not listed
    w.mux.down()
    try {
      const { status, body } = await json(await w.live())
      expect(status).toBe(200)
      expect(body.availability).toBe('degraded')
      expect(body.error).toBe('Streaming provider unavailable: served from cached sessions')
      const entry = body.djs.find((d: any) => d.id === s.stream.id)
      expect(entry).toEqual({
        id: s.stream.id,
        name: 'Cached DJ',
        wallet: s.walletAddress,
        playbackId: s.stream.playbackId,
        streamKey: null,
        status: 'active',
        startedAt: (await w.session(s.session.id)).startedAt.toISOString(),
        source: 'session-cache',
        hlsUrl: `https://stream.mux.com/${s.stream.playbackId}.m3u8`,
        embedUrl: `https://player.mux.com/${s.stream.playbackId}`,
      })
      expect(body.djs.find((d: any) => d.id === waiting.stream.id)).toBeUndefined()
      expect(body.distribution).toMatchObject({ origin: { status: 'degraded' }, firstParty: { status: 'degraded' }, overallStatus: 'degraded' })
    } finally {
      w.mux.up()
    }
  })

  it('Mux down and the database too: 503 `Radio status unavailable`', async () => {
    const real = w.h.services.reader
    const broken: Reader = { asUser: () => Promise.reject(new Error('database down')), asService: () => Promise.reject(new Error('database down')) }
    ;(w.h.services as { reader: Reader }).reader = broken
    w.mux.down()
    try {
      expect(await json(await w.live())).toEqual({ status: 503, body: { error: 'Radio status unavailable', code: 'STREAMING_UNAVAILABLE' } })
      // Mux answering with the database down: still 200, entries without their names.
      w.mux.up()
      const { status, body } = await json(await w.live())
      expect(status).toBe(200)
      expect(body.availability).toBe('live')
      expect(body.djs.every((d: any) => d.name === 'Anonymous DJ' && d.wallet === null)).toBe(true)
    } finally {
      ;(w.h.services as { reader: Reader }).reader = real
      w.mux.up()
    }
  })

  it('Mux not configured: degraded, saying so', async () => {
    await w.withConfig({ MUX_TOKEN_ID: undefined }, async () => {
      const { status, body } = await json(await w.live())
      expect(status).toBe(200)
      expect(body).toMatchObject({ availability: 'degraded', error: 'Streaming provider not configured: served from cached sessions' })
    })
  })
})

describe.skipIf(!anvilAvailable)('radio: the expiry job', () => {
  it('before the 2 hours: nothing happens; after: `auto-ended`, the Mux stream disabled, recordings kept', async () => {
    const s = await w.started()
    const asset = w.mux.connect(s.stream.id)
    expect(await json(await w.expire({ sessionId: s.session.id }))).toEqual({ status: 200, body: { ok: true, ended: 0, failed: 0 } })
    expect((await w.session(s.session.id)).status).toBe('active')
    await w.expireNow(s.session.id)
    expect(await json(await w.expire({ sessionId: s.session.id }))).toEqual({ status: 200, body: { ok: true, ended: 1, failed: 0 } })
    expect(await w.session(s.session.id)).toMatchObject({ status: 'auto-ended', endedAt: expect.any(Date) })
    expect(w.mux.streams.get(s.stream.id)).toMatchObject({ status: 'disabled', recent_asset_ids: [asset] })
    expect(w.mux.assets.has(asset)).toBe(true)
    // Delivered again (at least once): nothing more happens.
    expect((await json(await w.expire({ sessionId: s.session.id }))).body.ended).toBe(0)
  })

  it('a session the DJ ended is left as it is', async () => {
    const s = await w.started()
    await w.end(s.stream.id, s.session.accessToken, { archive: true })
    await w.expireNow(s.session.id)
    expect((await json(await w.expire({ sessionId: s.session.id }))).body.ended).toBe(0)
    expect((await w.session(s.session.id)).status).toBe('archived')
  })

  it('Mux down: 503 so the queue retries; the session stays current until it succeeds', async () => {
    const s = await w.started()
    await w.expireNow(s.session.id)
    w.mux.down()
    try {
      expect((await w.expire({ sessionId: s.session.id })).status).toBe(503)
      expect((await w.session(s.session.id)).status).toBe('active')
    } finally {
      w.mux.up()
    }
    expect((await json(await w.expire({ sessionId: s.session.id }))).body.ended).toBe(1)
  })

  it('the sweep (`{}`) ends every current session past its expiry, counting Mux failures for later', async () => {
    const a = await w.started()
    const b = await w.started()
    const c = await w.started()
    await w.expireNow(a.session.id)
    await w.expireNow(b.session.id)
    const { status, body } = await json(await w.expire({}))
    expect(status).toBe(200)
    expect(body.ended).toBeGreaterThanOrEqual(2)
    expect(body.failed).toBe(0)
    expect((await w.session(a.session.id)).status).toBe('auto-ended')
    expect((await w.session(b.session.id)).status).toBe('auto-ended')
    expect((await w.session(c.session.id)).status).toBe('active')
    await w.expireNow(c.session.id)
    w.mux.down()
    try {
      expect((await json(await w.expire({}))).body).toMatchObject({ ended: 0, failed: 1 })
    } finally {
      w.mux.up()
    }
    expect((await json(await w.expire({}))).body).toMatchObject({ ended: 1, failed: 0 })
  })
})

describe.skipIf(!anvilAvailable)('radio: station token reads', () => {
  it('the holding is scaled by decimals(): 2,500,000 tokens of 18 decimals, not 2,500,000 base units', async () => {
    const wallet = await w.smartWallet()
    await w.giveStation(wallet, 2_500_000n) // base units: far below 2.5M whole tokens
    expect((await w.create({ wallet })).status).toBe(402)
    await w.giveStation(wallet, HOLDING)
    expect((await w.create({ wallet })).status).toBe(200)
    expect(ONE_TOKEN).toBe(10n ** 18n)
  })
})

describe.skipIf(!anvilAvailable)('radio: webhook bodies', () => {
  it('a correctly signed body that is not JSON, or not an event: 400, nothing recorded', async () => {
    expect(await json(await w.webhook(null, { body: '{"id":' }))).toEqual({ status: 400, body: { error: 'Invalid JSON body', code: 'INVALID_JSON' } })
    expect(await json(await w.webhook({ type: 'video.live_stream.active' }))).toEqual({ status: 400, body: { error: 'Invalid event', code: 'VALIDATION' } })
    expect(await json(await w.webhook([1, 2]))).toEqual({ status: 400, body: { error: 'Invalid event', code: 'VALIDATION' } })
  })

  it('a failure while applying answers 500 with nothing recorded, and the redelivery applies it', async () => {
    const s = await w.started()
    const event = w.mux.event('video.live_stream.active', { id: s.stream.id })
    const real = w.h.services.db
    const transaction = real.transaction.bind(real)
    ;(real as { transaction: unknown }).transaction = () => Promise.reject(new Error('database down'))
    try {
      expect(await json(await w.webhook(event))).toEqual({ status: 500, body: { error: 'Webhook processing failed', code: 'INTERNAL' } })
    } finally {
      ;(real as { transaction: unknown }).transaction = transaction
    }
    expect((await json(await w.webhook(event))).body.outcome).toBe('applied')
    expect((await w.session(s.session.id)).status).toBe('live')
  })
})
