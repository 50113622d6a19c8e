import { describe, expect, it } from 'vitest'
import { askSoulHosts } from '../../../functions/colony/soul-host'
import { parseConfig } from '../../../lib/config'
import { useFixture, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { COLONY, startSoulHost, type SoulHost } from '../../support/soul-host'

// One harness: a primary, a fallback and a dead port;
// each test sets what the two live hosts answer.
const primary = useFixture(() => startSoulHost({}))
const fallback = useFixture(() => startSoulHost({}))
const h = useHarness(() => ({
  env: { SOUL_SERVICE_URL: primary.url, SOUL_SERVICE_FALLBACK_URLS: `${fallback.url},http://127.0.0.1:9`, SOUL_SERVICE_TIMEOUT_MS: '300' },
}))

const tree = (action = 'tree') => call(h, 'GET', `/api/colony/status?action=${action}`, { user: h.users.alice })
const set = (host: SoulHost, replies: SoulHost['replies']) => {
  for (const k of Object.keys(host.replies)) delete host.replies[k]
  Object.assign(host.replies, replies)
}
const FALLBACK_ROOT = { address: '0x0000000000000000000000000000000000000000', wallet_balance: { formatted: '0.00', token: 'USDC.e' } }

describe('colony: faults', () => {
  it('a failing primary: the fallback serves, marked degraded with error and detail', async () => {
    set(primary, { '/colony': { status: 500 } })
    set(fallback, { '/colony': { body: COLONY } })
    const body = await (await tree()).json()
    expect(body).toMatchObject({ degraded: true, error: 'Primary soul host unavailable; a fallback served', colony_size: 3 })
    expect(body.detail).toContain(`${primary.url}: HTTP 500`)
  })

  it('a faster fallback never hides a live primary', async () => {
    set(primary, { '/colony': { body: { ...COLONY, agents: COLONY.agents.slice(0, 1) }, delayMs: 100 } })
    set(fallback, { '/colony': { body: COLONY } })
    const body = await (await tree()).json()
    expect(body.degraded).toBeUndefined()
    expect(body.colony_size).toBe(1)
  })

  it('no host answers (malformed, too slow, refused): 200 degraded with the zero address and 0.00 USDC.e', async () => {
    set(primary, { '/colony': { raw: 'not json' }, '/soul': { raw: '[1,2]' } })
    set(fallback, { '/colony': { body: COLONY, delayMs: 1_000 }, '/soul': { hang: true } })
    const res = await tree()
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ degraded: true, error: 'Soul host unavailable', colony_size: 0, avg_fitness: 0, fittest: null, cull_queue: [], agents: [], root: FALLBACK_ROOT })
    expect(body.detail).toContain(`${primary.url}: malformed`)
    expect(body.detail).toContain(`${fallback.url}: timeout`)
    expect(body.detail).toContain('http://127.0.0.1:9: unreachable')
    expect(await (await tree('soul')).json()).toMatchObject({ degraded: true, active: null, fitness: null, lifecycle: null })
  })

  it('diagnostics lists every host, primary first', async () => {
    set(primary, { '/health': { body: { ok: true } } })
    set(fallback, { '/health': { status: 503 } })
    const body = await (await tree('diagnostics')).json()
    expect(body.hosts.map((x: { host: string; role: string; ok: boolean; detail: string }) => [x.host, x.role, x.ok, x.detail])).toEqual([
      [primary.url, 'primary', true, 'HTTP 200'],
      [fallback.url, 'fallback', false, 'HTTP 503'],
      ['http://127.0.0.1:9', 'fallback', false, 'unreachable'],
    ])
  })

  it('values out of range are bounded: fitness clamped to 0-100, unknown statuses become active, an id-less agent is borg-root', async () => {
    set(primary, { '/colony': { body: { agents: [{ fitness: 250, status: 'weird' }, { id: 'neg', fitness: -5 }, { id: 'str', fitness: '45.55' }] } } })
    const body = await (await tree()).json()
    expect(body.agents.map((a: { id: string; fitness: number; status: string }) => [a.id, a.fitness, a.status])).toEqual([
      ['borg-root', 100, 'active'],
      ['neg', 0, 'active'],
      ['str', 45.6, 'active'],
    ])
    expect(body.avg_fitness).toBe(48.5)
    expect(body.root).toMatchObject(FALLBACK_ROOT)
  })

  it('an unknown action is 400', async () => {
    const res = await tree('everything')
    expect(res.status).toBe(400)
    expect((await res.json()).code).toBe('VALIDATION')
  })

  it('the answer names hosts by origin only: a path or query in the configured URL never shows', async () => {
    const answer = await askSoulHosts(parseConfig({ SOUL_SERVICE_URL: `http://127.0.0.1:9/secret-path?token=x`, SOUL_SERVICE_TIMEOUT_MS: '300' }), '/colony')
    expect(answer).toEqual({ ok: false, attempts: [{ host: 'http://127.0.0.1:9', ok: false, detail: 'unreachable', latencyMs: expect.any(Number) }] })
  })

  it('no SOUL_SERVICE_URL: nothing is asked', async () => {
    expect(await askSoulHosts(parseConfig({}), '/colony')).toEqual({ ok: false, attempts: [] })
  })
})
