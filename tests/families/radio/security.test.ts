import { describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { SiweMessage } from 'viem/siwe'
import { issueDjToken } from '../../../functions/radio/token'
import { anvilAvailable } from '../../support/anvil'
import { muxSignature } from '../../support/mux-server'
import { walletProof } from '../../support/wallet-proof'
import { mppMemo, mppSecret } from '../../support/payment-chain'
import { askChallenge, credential, gateway, pluginsEnv, startPluginServer } from '../gateway/helpers'
import { HOLDING, radioWorld } from './helpers'
import { useFixture } from '../../support/harness'

// The gateway's plugins too: a payment refused as a fee must still pay its call.
const plugins = useFixture(() => startPluginServer())
// anvil, contract deployments and the stores: slow to start when other suites share the machine
const w = useFixture(() => radioWorld({ env: pluginsEnv(plugins) }), { timeout: 180_000 })

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any })
const SECRET = 'test-session-secret'

describe.skipIf(!anvilAvailable)('radio: the DJ access token', () => {
  it('no token, another scheme or a malformed one: 401, nothing ended', async () => {
    const s = await w.started()
    expect(await json(await w.end(s.stream.id, null))).toEqual({ status: 401, body: { error: 'DJ access token required', code: 'UNAUTHORIZED' } })
    expect((await w.end(s.stream.id, null, undefined, { authorization: `Basic ${s.session.accessToken}` })).status).toBe(401)
    expect(await json(await w.end(s.stream.id, 'not.a-token'))).toEqual({ status: 401, body: { error: 'Invalid DJ access token', code: 'INVALID_TOKEN' } })
    // A signed-in user's cookie is no substitute.
    expect((await w.end(s.stream.id, null, undefined, { cookie: w.h.users.alice.cookie })).status).toBe(401)
    expect((await w.session(s.session.id)).status).toBe('active')
  })

  it('forged (another secret), tampered (another session in the payload) or expired: 401 `INVALID_TOKEN`', async () => {
    const s = await w.started()
    const other = await w.started()
    const claims = { sessionId: s.session.id, wallet: s.walletAddress.toLowerCase(), exp: Math.floor(Date.now() / 1000) + 3600 }
    const forged = await issueDjToken('not-the-secret', claims)
    const [header, payload, signature] = s.session.accessToken.split('.')
    const signed = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...signed, sub: other.session.id, wallet: other.walletAddress.toLowerCase() })).toString('base64url')}.${signature}`
    const expired = await issueDjToken(SECRET, { ...claims, exp: Math.floor(Date.now() / 1000) - 1 })
    for (const token of [forged, tampered, expired]) {
      expect(await json(await w.end(s.stream.id, token))).toEqual({ status: 401, body: { error: 'Invalid DJ access token', code: 'INVALID_TOKEN' } })
    }
    expect((await w.end(other.stream.id, tampered)).status).toBe(401)
    expect((await w.session(s.session.id)).status).toBe('active')
    expect((await w.session(other.session.id)).status).toBe('active')
  })

  it("a DJ's token cannot end another DJ's stream: 403, both untouched", async () => {
    const mine = await w.started()
    const theirs = await w.started()
    expect(await json(await w.end(theirs.stream.id, mine.session.accessToken))).toEqual({ status: 403, body: { error: 'This token is for another stream', code: 'FORBIDDEN' } })
    expect((await w.session(theirs.session.id)).status).toBe('active')
    expect((await w.session(mine.session.id)).status).toBe('active')
    expect(w.mux.streams.get(theirs.stream.id)!.status).toBe('idle')
  })

  it('a token the service signed for a session and wallet that do not match is refused (403)', async () => {
    const s = await w.started()
    const wrongWallet = await issueDjToken(SECRET, { sessionId: s.session.id, wallet: `0x${'1'.repeat(40)}`, exp: Math.floor(Date.now() / 1000) + 60 })
    expect((await w.end(s.stream.id, wrongWallet)).status).toBe(403)
    const unknown = await issueDjToken(SECRET, { sessionId: crypto.randomUUID(), wallet: s.walletAddress.toLowerCase(), exp: Math.floor(Date.now() / 1000) + 60 })
    expect(await json(await w.end(s.stream.id, unknown))).toEqual({ status: 404, body: { error: 'Stream not found', code: 'NOT_FOUND' } })
  })

  it('the token is checked before the body: a bad body without a token is 401', async () => {
    const s = await w.started()
    expect((await w.end(s.stream.id, null, '{"archive":')).status).toBe(401)
  })
})

const PROOF_REQUIRED = { status: 401, body: { error: 'Wallet proof required: `message` and `signature`', code: 'SIGNATURE_REQUIRED' } }

describe.skipIf(!anvilAvailable)('radio: the wallet proves itself before anything is granted', () => {
  it("finding 1: a holder's wallet named without its proof, with another key's signature or with the caller's own proof is refused; the holder then starts", async () => {
    const holder = await w.smartWallet()
    await w.giveStation(holder, HOLDING)
    const attacker = privateKeyToAccount(generatePrivateKey())
    const streams = w.mux.streams.size
    expect(await json(await w.post({ wallet: holder, name: 'Not the holder' }))).toEqual(PROOF_REQUIRED)
    // The attacker signs a message naming the holder's wallet: the wallet's ERC-1271 check rejects the key.
    const forged = await json(await w.post({ wallet: holder, ...(await w.proof(holder, { signer: attacker })) }))
    expect(forged).toEqual({ status: 401, body: { error: 'Invalid signature', code: 'SIGNATURE_INVALID' } })
    // A genuine proof, of the attacker's own wallet, does not prove the holder's.
    const own = await w.proof(attacker.address, { signer: attacker })
    expect(await json(await w.post({ wallet: holder, ...own }))).toEqual({ status: 401, body: { error: 'Message address does not match', code: 'ADDRESS_MISMATCH' } })
    expect(await w.sessionsOf(holder)).toEqual([])
    expect(w.mux.streams.size).toBe(streams) // Mux was never asked
    // The holder is not locked out.
    const { status, body } = await json(await w.create({ wallet: holder }))
    expect(status, JSON.stringify(body)).toBe(200)
    expect((await w.session(body.session.id)).accessPath).toBe('holding')
  })

  it("finding 2: the DJ's fee cannot be redeemed by someone else, whatever they prove; nothing is recorded and the DJ then gets the session", async () => {
    const dj = await w.smartWallet()
    const txHash = await w.pay(dj)
    const attackerKey = privateKeyToAccount(generatePrivateKey())
    const attacker = await w.smartWallet({ owner: attackerKey })
    // The attacker's own (proven) wallet: the fee was not paid by it.
    const asSelf = await json(await w.create({ wallet: attacker, txHash }))
    expect(asSelf).toMatchObject({ status: 402, body: { code: 'PAYMENT_REJECTED', reason: 'wrong_payer' } })
    // The DJ's wallet: without a proof, with the attacker's proof, or with a message the attacker signed for it.
    expect(await json(await w.post({ wallet: dj, txHash }))).toEqual(PROOF_REQUIRED)
    expect((await json(await w.post({ wallet: dj, txHash, ...(await w.proof(attacker)) }))).body.code).toBe('ADDRESS_MISMATCH')
    expect((await json(await w.post({ wallet: dj, txHash, ...(await w.proof(dj, { signer: attackerKey })) }))).body.code).toBe('SIGNATURE_INVALID')
    expect(await w.payment(txHash)).toBeUndefined()
    expect(await w.sessionsOf(dj)).toEqual([])

    const { status, body } = await json(await w.create({ wallet: dj, txHash }))
    expect(status, JSON.stringify(body)).toBe(200)
    expect(await w.payment(txHash)).toMatchObject({ purpose: 'radio_access', reference: body.session.id, payer: dj.toLowerCase() })
  })

  it('a proof is single use: replayed after its session ended, it is 401 `NONCE_INVALID`', async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet)
    const proof = await w.proof(wallet)
    const first = await json(await w.post({ wallet, ...proof }))
    expect(first.status).toBe(200)
    expect((await w.end(first.body.stream.id, first.body.session.accessToken)).status).toBe(200)
    expect(await json(await w.post({ wallet, ...proof }))).toEqual({ status: 401, body: { error: 'Invalid or expired nonce', code: 'NONCE_INVALID' } })
    expect(await w.sessionsOf(wallet)).toHaveLength(1)
  })

  it('expired, not yet valid, foreign, another chain, a sign-in message, a payment-session proof or a nonce never issued: refused, nothing started', async () => {
    const wallet = await w.smartWallet()
    await w.grantGuestPass(wallet)
    const cases: Array<[Partial<SiweMessage>, number, string]> = [
      [{ expirationTime: new Date(Date.now() - 1000) }, 401, 'MESSAGE_EXPIRED'],
      [{ issuedAt: new Date(Date.now() + 5 * 60_000) }, 401, 'MESSAGE_NOT_YET_VALID'],
      [{ domain: 'evil.example' }, 401, 'DOMAIN_MISMATCH'],
      [{ uri: 'https://evil.example/radio' }, 401, 'URI_MISMATCH'],
      [{ chainId: 1 }, 401, 'CHAIN_MISMATCH'],
      [{ statement: undefined }, 400, 'MESSAGE_MALFORMED'],
      [{ statement: 'Open a payment session with this wallet.' }, 400, 'MESSAGE_MALFORMED'],
      [{ nonce: 'f'.repeat(32) }, 401, 'NONCE_INVALID'],
    ]
    for (const [over, status, code] of cases) {
      const res = await json(await w.post({ wallet, ...(await w.proof(wallet, { over })) }))
      expect(res, JSON.stringify(over)).toMatchObject({ status, body: { code } })
    }
    expect(await w.sessionsOf(wallet)).toEqual([])
    expect((await w.create({ wallet })).status).toBe(200)
  })

  it('a DJ proof is not a sign-in: `POST /api/wallet-auth` refuses it (400 `MESSAGE_MALFORMED`), no session cookie', async () => {
    const eoa = privateKeyToAccount(generatePrivateKey())
    const proof = await walletProof(w.h.web, 'radio', eoa.address, eoa)
    const res = await w.h.web.request('/api/wallet-auth', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address: eoa.address, ...proof }) })
    expect(await json(res)).toEqual({ status: 400, body: { error: 'Message is a wallet proof, not a sign-in', code: 'MESSAGE_MALFORMED' } })
    expect(res.headers.get('set-cookie')).toBeNull()
  })
})

describe.skipIf(!anvilAvailable)('radio: the DJ token is bound to its session over time', () => {
  it("a wallet's token for an ended session cannot end its next session (403); the new token can", async () => {
    const wallet = await w.smartWallet()
    const first = await w.started({ wallet })
    expect((await w.end(first.stream.id, first.session.accessToken)).status).toBe(200)
    const second = await w.started({ wallet })
    expect(await json(await w.end(second.stream.id, first.session.accessToken))).toEqual({ status: 403, body: { error: 'This token is for another stream', code: 'FORBIDDEN' } })
    expect((await w.session(second.session.id)).status).toBe('active')
    expect((await w.end(second.stream.id, second.session.accessToken)).status).toBe(200)
  })
})

describe.skipIf(!anvilAvailable)('radio: create cannot be abused', () => {
  it("a transfer from someone else cannot pay for a wallet (the payer must be the wallet)", async () => {
    const wallet = await w.smartWallet()
    const payer = await w.smartWallet()
    const txHash = await w.pay(payer)
    // Both wallets prove themselves (`create` adds the proof): the named one simply did not pay.
    expect((await json(await w.create({ wallet, txHash }))).body).toMatchObject({ code: 'PAYMENT_REJECTED', reason: 'wrong_payer' })
    // The payer's own use of it still works: nothing was recorded by the refused attempt.
    expect((await w.create({ wallet: payer, txHash })).status).toBe(200)
  })

  it('a call’s MPP payment is no DJ fee, even for its own wallet (402 `memo_bound`, nothing recorded); the gateway then serves the call', async () => {
    // A wallet with code that sends its own transactions (as an EIP-7702 account does) pays a gateway call by MPP.
    const dj = await w.smartWallet()
    const { mpp, params } = await askChallenge(w.h)
    const secret = mppSecret()
    // 5 USDC: as much as the fee, more than the call's price (a payment may exceed it)
    const txHash = await w.pay(dj, { amount: '5', memo: mppMemo(params.id, secret) })
    // Someone else's proven wallet did not pay it (refused from the receipt); the DJ's own use names a call, not a fee.
    const other = await w.smartWallet()
    expect((await json(await w.create({ wallet: other, txHash }))).body).toMatchObject({ code: 'PAYMENT_REJECTED', reason: 'wrong_payer' })
    expect(await json(await w.create({ wallet: dj, txHash }))).toEqual({
      status: 402,
      body: { error: 'The transfer carries a payment memo: it pays a gateway call', code: 'PAYMENT_REJECTED', reason: 'memo_bound' },
    })
    expect(await w.payment(txHash)).toBeUndefined()
    expect(await w.sessionsOf(dj)).toEqual([])

    const res = await gateway(w.h, { headers: { authorization: credential(params, txHash, secret) } })
    expect(res.status).toBe(200)
    expect(res.headers.get('payment-receipt')).toBe(txHash)
    expect(await w.payment(txHash)).toMatchObject({ purpose: 'mpp', reference: mpp.nonce, payer: dj })
  })

  it('no stream key or access token is ever stored or listed', async () => {
    const s = await w.started({ name: 'Secretive' })
    w.mux.connect(s.stream.id)
    const row = await w.session(s.session.id)
    const stored = JSON.stringify(row)
    expect(stored).not.toContain(s.stream.streamKey)
    expect(stored).not.toContain(s.session.accessToken)
    const live = JSON.stringify(await (await w.live()).json())
    expect(live).toContain(s.stream.id)
    expect(live).not.toContain(s.stream.streamKey)
    expect(live).not.toContain(s.session.accessToken)
  })

  it('creation is rate limited per client address (10 a minute)', async () => {
    const { withinOneWindow } = await import('../../support/requests')
    await withinOneWindow(60)
    const ip = `198.51.100.${Math.floor(Math.random() * 200) + 1}`
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) statuses.push((await w.create({}, { 'cf-connecting-ip': ip })).status)
    expect(statuses.slice(0, 10).every((s) => s === 400)).toBe(true)
    const refused = await w.create({}, { 'cf-connecting-ip': ip })
    expect(await json(refused)).toEqual({ status: 429, body: { error: 'Too many requests', code: 'RATE_LIMITED' } })
    expect(refused.headers.get('retry-after')).toBeTruthy()
  })
})

describe.skipIf(!anvilAvailable)('radio: the Mux webhook', () => {
  it('missing, forged, stale, future-dated, other-secret or tampered signatures: 400, nothing recorded or changed', async () => {
    const s = await w.started()
    const event = w.mux.event('video.live_stream.active', w.mux.streams.get(s.stream.id)!)
    const body = JSON.stringify(event)
    const now = Math.floor(Date.now() / 1000)
    const refusals: Array<Record<string, string>> = [
      {},
      { 'mux-signature': `t=${now},v1=${'0'.repeat(64)}` },
      { 'mux-signature': w.mux.sign(body, now - 330) },
      { 'mux-signature': w.mux.sign(body, now + 330) },
      { 'mux-signature': muxSignature('another-secret', body, now) },
      { 'mux-signature': w.mux.sign(body.replace('active', 'idle'), now) },
      { 'mux-signature': 'garbage' },
      { 'mux-signature': `v1=${w.mux.sign(body, now).split('v1=')[1]}` },
    ]
    for (const headers of refusals) {
      const res = await w.h.web.request('/api/radio/webhook', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
      expect(await json(res), JSON.stringify(headers)).toEqual({ status: 400, body: { error: 'Invalid signature', code: 'WEBHOOK_SIGNATURE_INVALID' } })
    }
    expect((await w.session(s.session.id)).status).toBe('active')
    // Within the 5-minute tolerance it is taken; several v1 entries (a rotated secret) are fine.
    const rotated = `${muxSignature('old-secret', body, now - 280)},v1=${w.mux.sign(body, now - 280).split('v1=')[1]}`
    expect((await json(await w.webhook(event, { signature: rotated }))).body).toEqual({ received: true, outcome: 'applied' })
    expect((await w.session(s.session.id)).status).toBe('live')
  })

  it('not configured: 503 before anything is read', async () => {
    await w.withConfig({ MUX_WEBHOOK_SECRET: undefined }, async () => {
      expect(await json(await w.webhook({ id: 'x', type: 'video.live_stream.active' }))).toEqual({ status: 503, body: { error: 'Mux webhook not configured', code: 'NOT_CONFIGURED' } })
    })
  })

  it('a replayed event (same id) changes nothing the second time, even concurrently', async () => {
    const s = await w.started()
    w.mux.connect(s.stream.id)
    const active = w.mux.event('video.live_stream.active', w.mux.streams.get(s.stream.id)!)
    expect((await json(await w.webhook(active))).body.outcome).toBe('applied')
    // The DJ stops; `idle` brings the session back to `active`. Replaying the old `active` must not make it live.
    w.mux.disconnect(s.stream.id)
    expect((await json(await w.webhook(w.mux.event('video.live_stream.idle', w.mux.streams.get(s.stream.id)!)))).body.outcome).toBe('applied')
    expect((await json(await w.webhook(active))).body.outcome).toBe('duplicate')
    expect((await w.session(s.session.id)).status).toBe('active')
    const again = w.mux.event('video.live_stream.active', w.mux.streams.get(s.stream.id)!)
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => w.webhook(again).then(json)))
    expect(outcomes.map((o) => o.body.outcome).sort()).toEqual(['applied', 'duplicate', 'duplicate', 'duplicate', 'duplicate'])
  })
})

describe.skipIf(!anvilAvailable)('radio: the expiry receiver', () => {
  it('unsigned or signed with another key: 401, nothing ended', async () => {
    const s = await w.started()
    await w.expireNow(s.session.id)
    const unsigned = await w.h.web.request('http://127.0.0.1:8787/api/radio/expire', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId: s.session.id }) })
    expect(await json(unsigned)).toEqual({ status: 401, body: { error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' } })
    expect((await w.expire({ sessionId: s.session.id }, 'not-the-key')).status).toBe(401)
    expect((await w.session(s.session.id)).status).toBe('active')
  })
})
