import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAvailable } from '../../support/anvil'
import { expectPeerUnavailable, type FaultProxy, startFaultProxy, underFault } from '../../support/fault-proxy'
import { useFixture } from '../../support/harness'
import { useLogLines } from '../../support/log-lines'
import { radioWorld } from './helpers'

/** Each Mux call gives up after this long (`MUX_TIMEOUT_MS`): a Mux that never answers fails the request in time. */
const MUX_TIMEOUT_MS = 400
/** The bound on an answer while Mux is down: the call's deadline, and room for a loaded machine. */
const ANSWER_WITHIN_MS = MUX_TIMEOUT_MS + 1500
const UNAVAILABLE = { error: 'Streaming provider unavailable', code: 'STREAMING_UNAVAILABLE' }
const FAULTS = ['refuse', 'blackhole'] as const

/**
 * Mux behind the fault proxy, refused (connections refused) and blackholed (accepted, never answered), README
 * "When a dependency fails": creating, ending and expiring a session answer 503 `STREAMING_UNAVAILABLE` with
 * `Retry-After` within `MUX_TIMEOUT_MS`, nothing half-done kept, one log line naming Mux; the live view answers 200
 * `degraded` from the session records (the spec's answer); the same requests succeed once Mux is back.
 */
const w = useFixture(() => radioWorld(), { timeout: 180_000 })
const logs = useLogLines()
let proxy: FaultProxy

describe.skipIf(!anvilAvailable)('radio while Mux is down', () => {
  beforeAll(async () => {
    proxy = await startFaultProxy({ target: w.mux.url, mode: 'http' })
    Object.assign(w.h.services.config, { MUX_API_URL: proxy.url })
  })
  afterAll(async () => {
    await proxy?.close()
  })

  /** Runs `fn` with Mux under `fault` and the short deadline (the calls that succeed keep the world's generous one). */
  const whileDown = <T>(fault: (typeof FAULTS)[number], fn: () => Promise<T>) => underFault(proxy, fault, () => w.withConfig({ MUX_TIMEOUT_MS }, fn))

  const expectUnavailable = (res: Response, ms: number, event: string) =>
    expectPeerUnavailable(logs, res, ms, { body: UNAVAILABLE, withinMs: ANSWER_WITHIN_MS, event, dependency: 'mux' })

  it.each(FAULTS)('create while Mux is %sd → 503 in time; no session, the fee not spent; then the same fee starts one', async (fault) => {
    const wallet = await w.smartWallet()
    const txHash = await w.pay(wallet)
    const { value: res, ms } = await whileDown(fault, () => w.create({ wallet, txHash }))
    await expectUnavailable(res, ms, 'radio.stream_not_created')
    expect(await w.sessionsOf(wallet)).toEqual([])
    expect(await w.payment(txHash)).toBeUndefined()

    const again = await w.create({ wallet, txHash })
    expect(again.status).toBe(200)
    expect(await w.payment(txHash)).toBeDefined()
  })

  it.each(FAULTS)('end while Mux is %sd → 503 in time; the session stays current; sent again, it ends', async (fault) => {
    const s = await w.started()
    const { value: res, ms } = await whileDown(fault, () => w.end(s.stream.id, s.session.accessToken))
    await expectUnavailable(res, ms, 'radio.end_failed')
    expect((await w.session(s.session.id)).status).toBe('active')

    expect((await w.end(s.stream.id, s.session.accessToken)).status).toBe(200)
    expect((await w.session(s.session.id)).status).toBe('ended')
  })

  it.each(FAULTS)('the expiry job while Mux is %sd → 503 in time (the queue delivers again); the session stays until it succeeds', async (fault) => {
    const s = await w.started()
    await w.expireNow(s.session.id)
    const { value: res, ms } = await whileDown(fault, () => w.expire({ sessionId: s.session.id }))
    await expectUnavailable(res, ms, 'radio.expire_failed')
    expect((await w.session(s.session.id)).status).toBe('active')

    expect(await (await w.expire({ sessionId: s.session.id })).json()).toEqual({ ok: true, ended: 1, failed: 0 })
    expect((await w.session(s.session.id)).status).toBe('auto-ended')
  })

  it.each(FAULTS)('the live view while Mux is %sd → 200 `degraded` from the session records, in time; then `live` again', async (fault) => {
    const s = await w.started({ name: `On air ${fault}` })
    w.mux.connect(s.stream.id)
    expect((await w.webhook(w.mux.event('video.live_stream.active', w.mux.streams.get(s.stream.id)!))).status).toBe(200)

    const { value: res, ms } = await whileDown(fault, () => w.live())
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ availability: 'degraded', error: 'Streaming provider unavailable: served from cached sessions' })
    expect(body.djs.find((d: { id: string }) => d.id === s.stream.id)).toMatchObject({ name: `On air ${fault}`, source: 'session-cache', streamKey: null })
    logs.expectOne('radio.live_mux_unavailable', { dependency: 'mux' })

    const back = await (await w.live()).json()
    expect(back.availability).toBe('live')
    expect((await w.end(s.stream.id, s.session.accessToken)).status).toBe(200)
  })
})
