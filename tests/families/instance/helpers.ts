import { newGatewayToken } from '../../../lib/agents/access'
import { agents, type Agent } from '../../../schema'
import type { Harness, SeededUser } from '../../support/harness'
import { HEALTHY, startFakeRuntime, type FakeAnswer, type FakeRuntime } from '../../support/fake-runtime'

let seq = 0

/** An agent of `user` registered with `runtimeUrl` (a fake runtime's), with a sealed gateway token. */
export async function seedAgent(h: Harness, user: SeededUser, over: Partial<typeof agents.$inferInsert> = {}): Promise<Agent> {
  const sealed = await newGatewayToken(h.services.config, user.id)
  const [row] = await h.db
    .insert(agents)
    .values({
      userId: user.id,
      name: `agent-${++seq}`,
      plan: 'solo',
      status: 'running',
      provisionedAt: new Date('2026-01-02T03:04:05Z'),
      gatewayToken: sealed.gatewayToken,
      gatewayTokenKeyId: sealed.gatewayTokenKeyId,
      ...over,
    })
    .returning()
  return row
}

/** The probes of a runtime in the spec's classification table (gateway paths added by each test). */
export const PROBES: Record<string, Record<string, FakeAnswer>> = {
  running: { '/healthz': HEALTHY.healthz, '/readyz': HEALTHY.readyz, '/api/status': HEALTHY.status() },
  healthy: { '/healthz': HEALTHY.healthz, '/readyz': HEALTHY.readyz },
  starting: { '/healthz': HEALTHY.healthz, '/readyz': { status: 503, body: { ready: false, failing: ['gateway'], uptimeMs: 10 } } },
  stopped: { '/api/status': HEALTHY.status({ running: false, state: 'stopped' }) },
  setup: { '/api/status': { body: { configured: false } } },
  unknown: { '/api/status': { body: { configured: true, state: 'booting' } } },
  unreachable: { '/healthz': { status: 500 }, '/readyz': { status: 500 }, '/api/status': { status: 500 } },
}

export const fakes: FakeRuntime[] = []
export async function fake(answers: Record<string, FakeAnswer>) {
  const f = await startFakeRuntime(answers)
  fakes.push(f)
  return f
}
export const closeFakes = () => Promise.all(fakes.splice(0).map((f) => f.close()))
