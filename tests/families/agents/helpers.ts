import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import type { AgentJson } from '../../../lib/agents/lifecycle'
import type { Services } from '../../../lib/context'
import type { RuntimeProvider } from '../../../lib/runtime/provider'
import { agents } from '../../../schema'
import type { Harness, SeededUser } from '../../support/harness'
import { call } from '../../support/requests'

export const INTERNAL_KEY = 'agents-test-internal-key'
/** Provisioning on, a shared key (also the identity-header secret). */
export const AGENTS_ENV = { PROVISIONING_ENABLED: '1', INTERNAL_API_KEY: INTERNAL_KEY }
export const SHARED = { authorization: `Bearer ${INTERNAL_KEY}` }

export async function provision(h: Harness, user: SeededUser, body: Record<string, unknown> = {}): Promise<AgentJson> {
  const res = await call(h, 'POST', '/api/provision', { user, body })
  const json = (await res.json()) as { agent: AgentJson; url: string | null }
  expect(res.status, JSON.stringify(json)).toBe(201)
  expect(json.url).toBe(json.agent.url)
  return json.agent
}

export const stats = async (h: Harness, user: SeededUser, id: string) => {
  const res = await call(h, 'GET', `/api/agents/${id}/stats`, { user })
  expect(res.status).toBe(200)
  return (await res.json()) as { status: string; agentStatus: string; probeChecks: unknown[]; runtimeVersion: string; health: string }
}

/** Probes through the API until the runtime classifies `running` (at most `ms`). */
export async function waitRunning(h: Harness, user: SeededUser, id: string, ms = 5000) {
  const until = Date.now() + ms
  for (;;) {
    const s = await stats(h, user, id)
    if (s.status === 'running') return s
    if (Date.now() > until) throw new Error(`agent ${id} not running after ${ms} ms: ${JSON.stringify(s)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

export const storedAgent = async (h: Harness, id: string) => (await h.db.select().from(agents).where(eq(agents.id, id)))[0]

export { withServices } from '../../support/harness'

export const provisioningConfig = (h: Harness, overrides: Partial<Services['config']>) => ({ config: { ...h.services.config, ...overrides } })

/** Whether anything answers on the runtime's URL (a deleted or stopped runtime's port is closed). */
export async function answers(url: string) {
  try {
    const res = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(1000) })
    await res.body?.cancel()
    return true
  } catch {
    return false
  }
}

export type { RuntimeProvider }
