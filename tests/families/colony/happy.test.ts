import { describe, expect, it } from 'vitest'
import { useFixture, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { COLONY, startSoulHost } from '../../support/soul-host'

const primary = useFixture(() => startSoulHost({
  '/colony': { body: COLONY },
  '/soul': { body: { active: true, mode: 'explore', fitness: { total: 80, trend: 'up', extra: 'dropped' }, beliefs: ['b'], secret_internal: 'dropped' } },
  '/health': { body: { ok: true } },
}))
const h = useHarness(() => ({ env: { SOUL_SERVICE_URL: primary.url, SOUL_SERVICE_TOKEN: 'soul-token' } }))

const status = (action?: string) => call(h, 'GET', `/api/colony/status${action ? `?action=${action}` : ''}`, { user: h.users.alice })

describe('colony: happy paths', () => {
  it('tree (the default): templates left out, average to one decimal, fittest, cull queue below 40, root as sent', async () => {
    const res = await status()
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.degraded).toBeUndefined()
    expect(body.colony_size).toBe(3)
    expect(body.agents.map((a: { id: string }) => a.id)).toEqual(['root', 'c1', 'c2'])
    expect(body.avg_fitness).toBe(57.5) // (82.5 + 60 + 30) / 3
    expect(body.fittest).toMatchObject({ id: 'root', fitness: 82.5, generation: 1, endpoints: [{ slug: 'mix', description: 'Mixes', price: '0.01' }] })
    expect(body.cull_queue.map((a: { id: string }) => a.id)).toEqual(['c2'])
    expect(body.agents[1]).toEqual({
      id: 'c1', name: 'Child one', generation: 2, fitness: 60, specialization: null, children: [], parent: '0x1111111111111111111111111111111111111111',
      walletAddress: null, status: 'active', createdAt: null, url: null, endpoints: [], uptime: 100, version: null,
    })
    expect(body.root).toMatchObject({
      address: '0x1111111111111111111111111111111111111111',
      wallet_balance: { formatted: '12.34', token: 'USDC' },
      soul: { active: true, dormant: false, total_cycles: 1234, mode: 'explore' },
      colony: { rank: 1, can_spawn: true, colony_size: 3, fitness_rank: [{ id: 'root', fitness: 82.5 }, { id: 'c1', fitness: 60 }, { id: 'c2', fitness: 30 }] },
    })
    expect(primary.seen.at(-1)).toEqual({ path: '/colony', authorization: 'Bearer soul-token' })
  })

  it('soul: exactly the spec’s keys, nulls for the ones not sent, the fitness object trimmed to its keys', async () => {
    const body = await (await status('soul')).json()
    expect(Object.keys(body)).toHaveLength(26)
    expect(body).toMatchObject({ active: true, mode: 'explore', beliefs: ['b'], lifecycle: null, hivemind: null, dormant: null })
    expect(body.fitness).toEqual({ total: 80, trend: 'up', coordination: null, economic: null, evolution: null, execution: null, introspection: null, prediction: null, measured_at: null })
    expect(body.secret_internal).toBeUndefined()
  })

  it('diagnostics: each host with its role, outcome and latency, origins only', async () => {
    const body = await (await status('diagnostics')).json()
    expect(body).toEqual({ configured: true, hosts: [{ host: primary.url, role: 'primary', ok: true, detail: 'HTTP 200', latencyMs: expect.any(Number) }], timestamp: expect.any(String) })
  })
})
