import { describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { readDjToken } from '../../../functions/radio/token'
import { anvilAvailable } from '../../support/anvil'
import { HOLDING, radioWorld, type Created } from './helpers'
import { useFixture } from '../../support/harness'

// anvil, contract deployments and the stores: slow to start when other suites share the machine
const w = useFixture(() => radioWorld(), { timeout: 180_000 })

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any })

describe.skipIf(!anvilAvailable)('radio: starting a session (anvil as chain 8453, the fake Mux API)', () => {
  it('a station token holder: 200 with the stream (key once), the session (token) and the ffmpeg block; Mux made a public stream capped at 2 h', async () => {
    const wallet = await w.smartWallet()
    await w.giveStation(wallet, HOLDING)
    const before = Date.now()
    const { status, body } = await json(await w.create({ wallet: wallet.toLowerCase(), name: '  Night Shift ', city: '  Lisbon  ' }))
    expect(status, JSON.stringify(body)).toBe(200)
    const created = body as Created
    const muxStream = w.mux.streams.get(created.stream.id)!
    expect(muxStream).toMatchObject({ status: 'idle', passthrough: created.session.id, max_continuous_duration: 7200, new_asset_settings: { playback_policies: ['public'] } })
    expect(muxStream.playback_ids).toEqual([{ id: created.stream.playbackId, policy: 'public' }])
    expect(created).toEqual({
      success: true,
      stream: {
        id: muxStream.id,
        name: 'Night Shift',
        wallet,
        streamKey: muxStream.stream_key,
        rtmpUrl: 'rtmps://global-live.mux.com:443/app',
        fullRtmpUrl: `rtmps://global-live.mux.com:443/app/${muxStream.stream_key}`,
        playbackId: muxStream.playback_ids[0].id,
        status: 'created',
      },
      session: { id: expect.any(String), wallet, maxDuration: 7200, remaining: expect.any(Number), expiresAt: expect.any(String), accessToken: expect.any(String) },
      ffmpeg: { rtmpUrl: created.stream.fullRtmpUrl, video: expect.stringContaining(created.stream.fullRtmpUrl), audioOnly: expect.stringContaining('-f flv'), notes: expect.any(Array) },
    })
    const expiresAt = Date.parse(created.session.expiresAt)
    expect(created.session.remaining).toBeGreaterThan(7190)
    expect(created.session.remaining).toBeLessThanOrEqual(7200)
    expect(expiresAt - before).toBeGreaterThanOrEqual(7200_000)
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(7200_000)

    const row = await w.session(created.session.id)
    expect(row).toMatchObject({ wallet: wallet.toLowerCase(), name: 'Night Shift', city: 'Lisbon', status: 'active', accessPath: 'holding', txHash: null, streamId: muxStream.id, playbackId: created.stream.playbackId })
    // The key is never stored: no column holds it.
    expect(JSON.stringify(row)).not.toContain(muxStream.stream_key)

    // The token names the session and wallet, and lasts as long as the session.
    const token = await readDjToken('test-session-secret', created.session.accessToken)
    expect(token).toEqual({ sessionId: created.session.id, wallet: wallet.toLowerCase(), exp: Math.floor(expiresAt / 1000) })

    // The 2-hour end is scheduled on the queue.
    expect(w.published.filter((p) => p.body.sessionId === created.session.id)).toEqual([
      { path: '/api/radio/expire', body: { sessionId: created.session.id }, opts: { delaySec: 7200, retries: 5, deduplicationId: `radio-expire-${created.session.id}` } },
    ])
  })

  it('exactly 2,500,000 whole tokens is enough (the minimum is inclusive, scaled by decimals())', async () => {
    const wallet = await w.smartWallet()
    await w.giveStation(wallet, HOLDING)
    expect((await w.create({ wallet })).status).toBe(200)
  })

  it('a guest pass (written in any case): 200, access path `guest_pass`, no token needed; `name` defaults to `DJ`', async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet.toUpperCase().replace('0X', '0x'))
    const { status, body } = await json(await w.create({ wallet }))
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.stream.name).toBe('DJ')
    expect((await w.session(body.session.id)).accessPath).toBe('guest_pass')
  })

  it('the 5 USDC fee from the wallet: 200, the payment recorded once as `radio_access` for the session', async () => {
    const wallet = await w.smartWallet()
    const txHash = await w.pay(wallet)
    const { status, body } = await json(await w.create({ wallet, txHash, name: 'Payer' }))
    expect(status, JSON.stringify(body)).toBe(200)
    const row = await w.session(body.session.id)
    expect(row).toMatchObject({ accessPath: 'payment', txHash })
    expect(await w.payment(txHash)).toMatchObject({
      purpose: 'radio_access',
      reference: body.session.id,
      chainId: 8453,
      payer: wallet.toLowerCase(),
      recipient: w.chain.recipient.toLowerCase(),
      token: w.chain.usdc.toLowerCase(),
      amount: '5000000',
    })
  })

  it('the fee paid through the smart wallet (its owner calls the account, which calls the token): 200, recorded as the wallet’s', async () => {
    const wallet = await w.smartWallet()
    const txHash = await w.pay(wallet, { viaOwner: true })
    const { status, body } = await json(await w.create({ wallet, txHash }))
    expect(status, JSON.stringify(body)).toBe(200)
    expect(await w.payment(txHash)).toMatchObject({ purpose: 'radio_access', reference: body.session.id, payer: wallet.toLowerCase(), amount: '5000000' })
  })

  it('a holder who also sends a txHash: the holding applies, the payment is not consumed', async () => {
    const wallet = await w.smartWallet()
    await w.giveStation(wallet, HOLDING)
    const txHash = await w.pay(wallet)
    const { body } = await json(await w.create({ wallet, txHash }))
    expect((await w.session(body.session.id)).accessPath).toBe('holding')
    expect(await w.payment(txHash)).toBeUndefined()
  })
})

describe.skipIf(!anvilAvailable)('radio: the wallet proof (a SIWE message over a nonce from /api/auth/nonce)', () => {
  it("a deployed smart wallet proves itself with its owner's signature, checked by ERC-1271; the message may name it in any case", async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet)
    const proof = await w.proof(wallet.toLowerCase())
    expect(proof.message).toContain('\n\nStart a DJ radio session with this wallet.\n\n')
    const { status, body } = await json(await w.post({ wallet, ...proof }))
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.session.wallet).toBe(wallet)
  })

  it('a counterfactual wallet signs ERC-6492-wrapped: 403 until it is deployed (only deployed smart wallets stream), then the wrapped proof is unwrapped and accepted', async () => {
    const salt = `0x${'5e'.repeat(32)}` as const
    const wallet = await w.counterfactual(salt)
    await w.grantGuestPass(wallet)
    const proof = await w.proof(wallet)
    expect(proof.signature.endsWith('6492'.repeat(16))).toBe(true) // the ERC-6492 magic suffix
    expect(await json(await w.post({ wallet, ...proof }))).toEqual({ status: 403, body: { error: 'A smart wallet is required', code: 'SMART_WALLET_REQUIRED' } })
    await w.deployCounterfactual(salt)
    // The same wrapping by another key is still refused by the wallet.
    const stranger = privateKeyToAccount(generatePrivateKey())
    const forged = await w.proof(wallet, { signer: (message) => w.sign6492(salt, message, stranger) })
    expect((await json(await w.post({ wallet, ...forged }))).body.code).toBe('SIGNATURE_INVALID')
    const { status, body } = await json(await w.post({ wallet, ...(await w.proof(wallet)) }))
    expect(status, JSON.stringify(body)).toBe(200)
    expect((await w.session(body.session.id)).accessPath).toBe('guest_pass')
  })
})

describe.skipIf(!anvilAvailable)('radio: ending a session', () => {
  it('without archive: `ended`, the stream disabled then deleted with its recordings; the slot is free again', async () => {
    const s = await w.started()
    const asset = w.mux.connect(s.stream.id)
    const { status, body } = await json(await w.end(s.stream.id, s.session.accessToken))
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body).toEqual({
      success: true,
      alreadyEnded: false,
      session: { id: s.session.id, wallet: s.walletAddress, status: 'ended', endedAt: expect.any(String) },
      stream: { id: s.stream.id, assetsDeleted: 1 },
    })
    expect(w.mux.streams.has(s.stream.id)).toBe(false)
    expect(w.mux.assets.has(asset)).toBe(false)
    expect((await w.session(s.session.id)).status).toBe('ended')
    // A new session for the same wallet is allowed now.
    expect((await w.create({ wallet: s.walletAddress })).status).toBe(200)
  })

  it('with `archive: true`: `archived`, the stream disabled, its recordings kept', async () => {
    const s = await w.started()
    const asset = w.mux.connect(s.stream.id)
    const { status, body } = await json(await w.end(s.stream.id, s.session.accessToken, { archive: true }))
    expect(status).toBe(200)
    expect(body.session.status).toBe('archived')
    expect(body.stream.assetsDeleted).toBe(0)
    expect(w.mux.streams.get(s.stream.id)).toMatchObject({ status: 'disabled', recent_asset_ids: [asset] })
    expect(w.mux.assets.has(asset)).toBe(true)
  })

  it('a `live` session ends the same way (both current statuses are treated alike)', async () => {
    const s = await w.started()
    w.mux.connect(s.stream.id)
    expect((await w.webhook(w.mux.event('video.live_stream.active', w.mux.streams.get(s.stream.id)!))).status).toBe(200)
    expect((await w.session(s.session.id)).status).toBe('live')
    const { status, body } = await json(await w.end(s.stream.id, s.session.accessToken, {}))
    expect(status).toBe(200)
    expect(body.session.status).toBe('ended')
  })

  it('ending twice the same way is idempotent: 200 `alreadyEnded`, Mux not called again', async () => {
    const s = await w.started()
    expect((await w.end(s.stream.id, s.session.accessToken, { archive: true })).status).toBe(200)
    const calls = w.mux.requests.length
    const { status, body } = await json(await w.end(s.stream.id, s.session.accessToken, { archive: true }))
    expect(status).toBe(200)
    expect(body).toMatchObject({ alreadyEnded: true, session: { status: 'archived' }, stream: { assetsDeleted: 0 } })
    expect(w.mux.requests.length).toBe(calls)
  })

  it('two concurrent ends: one does the work, the other answers `alreadyEnded`', async () => {
    const s = await w.started()
    const results = await Promise.all([w.end(s.stream.id, s.session.accessToken), w.end(s.stream.id, s.session.accessToken)].map(async (r) => json(await r)))
    expect(results.map((r) => r.status)).toEqual([200, 200])
    expect(results.map((r) => r.body.alreadyEnded).sort()).toEqual([false, true])
  })
})

describe.skipIf(!anvilAvailable)('radio: the live view', () => {
  it('Mux active streams, enriched from their sessions, longest-running first; a stream without a session is `Anonymous DJ`', async () => {
    const first = await w.started({ name: 'Opener' })
    await new Promise((r) => setTimeout(r, 5))
    const second = await w.started({ name: 'Closer' })
    w.mux.connect(first.stream.id)
    w.mux.connect(second.stream.id)
    const foreign = w.mux.addForeignStream()
    const { status, body } = await json(await w.live())
    expect(status).toBe(200)
    const mine = body.djs.filter((d: any) => [first.stream.id, second.stream.id].includes(d.id))
    expect(mine.map((d: any) => d.name)).toEqual(['Opener', 'Closer'])
    expect(mine[0]).toEqual({
      id: first.stream.id,
      name: 'Opener',
      wallet: first.walletAddress,
      playbackId: first.stream.playbackId,
      streamKey: null,
      status: 'active',
      startedAt: (await w.session(first.session.id)).startedAt.toISOString(),
      source: 'mux',
      hlsUrl: `https://stream.mux.com/${first.stream.playbackId}.m3u8`,
      embedUrl: `https://player.mux.com/${first.stream.playbackId}`,
    })
    const anon = body.djs.find((d: any) => d.id === foreign.id)
    expect(anon).toMatchObject({ name: 'Anonymous DJ', wallet: null, streamKey: null, startedAt: Number(foreign.created_at), source: 'mux' })
    expect(body.count).toBe(body.djs.length)
    expect(body.primaryDj).toEqual(body.djs[0])
    expect(body).toMatchObject({
      availability: 'live',
      distribution: {
        origin: { status: 'active', playbackId: body.djs[0].playbackId, hlsUrl: body.djs[0].hlsUrl },
        firstParty: { status: 'healthy', pageUrl: 'http://localhost:3000/radio', note: expect.any(String) },
        relays: [],
        requiredRelayStatus: 'none',
        overallStatus: 'healthy',
      },
    })
    expect(body.error).toBeUndefined()
    // No stream key anywhere in the public view.
    expect(JSON.stringify(body)).not.toContain(w.mux.streams.get(first.stream.id)!.stream_key)
    for (const s of [first, second]) await w.end(s.stream.id, s.session.accessToken)
    w.mux.disconnect(foreign.id)
  })

  it('nobody on air: `idle`, no primary DJ, first party `stopped`', async () => {
    for (const s of w.mux.streams.values()) if (s.status === 'active') w.mux.disconnect(s.id)
    const { status, body } = await json(await w.live())
    expect(status).toBe(200)
    expect(body).toEqual({
      djs: [],
      count: 0,
      primaryDj: null,
      availability: 'idle',
      distribution: {
        origin: { status: 'idle', playbackId: null, hlsUrl: null },
        firstParty: { status: 'stopped', pageUrl: 'http://localhost:3000/radio', note: 'No DJ is on air' },
        relays: [],
        requiredRelayStatus: 'none',
        overallStatus: 'stopped',
      },
    })
  })

  it('is cached for a few seconds: a second request does not ask Mux again', async () => {
    await w.live()
    const calls = w.mux.requests.length
    expect((await w.live({ cached: true })).status).toBe(200)
    expect(w.mux.requests.length).toBe(calls)
  })
})

describe.skipIf(!anvilAvailable)('radio: Mux webhook events move sessions', () => {
  const outcome = async (res: Response) => {
    const { status, body } = await json(res)
    expect(status, JSON.stringify(body)).toBe(200)
    return body.outcome as string
  }

  it('`active` → `live`; `disconnected` changes nothing; `idle` → back to `active`', async () => {
    const s = await w.started()
    w.mux.connect(s.stream.id)
    const stream = () => w.mux.streams.get(s.stream.id)!
    expect(await outcome(await w.webhook(w.mux.event('video.live_stream.active', stream())))).toBe('applied')
    expect((await w.session(s.session.id)).status).toBe('live')
    expect(await outcome(await w.webhook(w.mux.event('video.live_stream.disconnected', stream())))).toBe('ignored')
    expect((await w.session(s.session.id)).status).toBe('live')
    w.mux.disconnect(s.stream.id)
    expect(await outcome(await w.webhook(w.mux.event('video.live_stream.idle', stream())))).toBe('applied')
    expect((await w.session(s.session.id)).status).toBe('active')
  })

  it('`disabled` or `deleted` outside this service: a current session → `auto-ended`', async () => {
    for (const type of ['video.live_stream.disabled', 'video.live_stream.deleted']) {
      const s = await w.started()
      expect(await outcome(await w.webhook(w.mux.event(type, { id: s.stream.id })))).toBe('applied')
      expect(await w.session(s.session.id)).toMatchObject({ status: 'auto-ended', endedAt: expect.any(Date) })
    }
  })

  it('after the DJ ended it, Mux\'s own `disabled`/`deleted` events change nothing', async () => {
    const s = await w.started()
    await w.end(s.stream.id, s.session.accessToken)
    expect(await outcome(await w.webhook(w.mux.event('video.live_stream.disabled', { id: s.stream.id })))).toBe('unchanged')
    expect(await outcome(await w.webhook(w.mux.event('video.live_stream.deleted', { id: s.stream.id })))).toBe('unchanged')
    expect((await w.session(s.session.id)).status).toBe('ended')
  })

  it('`active` for an expired session does not make it live', async () => {
    const s = await w.started()
    await w.expireNow(s.session.id)
    expect(await outcome(await w.webhook(w.mux.event('video.live_stream.active', { id: s.stream.id })))).toBe('unchanged')
    expect((await w.session(s.session.id)).status).toBe('active')
  })

  it('other event types, and streams without a session: 200, recorded, no effect', async () => {
    expect(await outcome(await w.webhook({ id: crypto.randomUUID(), type: 'video.asset.ready', object: { type: 'asset', id: 'a1' }, data: { id: 'a1' } }))).toBe('ignored')
    expect(await outcome(await w.webhook(w.mux.event('video.live_stream.active', { id: 'no-such-stream' })))).toBe('unchanged')
  })
})
