import { agentGateway, isGatewayTokenUnreadable } from '../../lib/agents/access'
import type { Services } from '../../lib/context'
import { errorFields, log } from '../../lib/log'
import { RuntimeProviderError, type CronJob, type GatewaySession } from '../../lib/runtime/provider'
import type { Agent } from '../../schema'

/** A session is active when its last message is this recent. */
export const ACTIVE_SESSION_MS = 60 * 60 * 1000
/** Sessions listed (the most recently active first). */
export const LISTED_SESSIONS = 10
/** Cron jobs listed: far more than a runtime has. */
export const LISTED_CRON_JOBS = 100

/**
 * `GET /api/gateway/status`: the agent's gateway read in two calls at once (sessions, cron jobs). The sessions
 * read is the health check: answered is `healthy` (`healthDetail {ok: true, status: 200}`), anything else
 * `unreachable` (`healthDetail {ok: false, error}`) with empty lists. A cron read that fails alone leaves the cron
 * part empty.
 */
export async function gatewayStatus(services: Pick<Services, 'config' | 'runtimes'>, agent: Agent, now = Date.now()) {
  let sessions: GatewaySession[] | null = null
  let jobs: CronJob[] = []
  let error: string | null = null
  try {
    const gateway = await agentGateway(services, agent)
    const [s, c] = await Promise.allSettled([gateway.sessions(), gateway.cronJobs()])
    if (s.status === 'fulfilled') sessions = s.value.filter(isEntry)
    else throw s.reason
    if (c.status === 'fulfilled') jobs = c.value.filter(isEntry)
    else log.warn('gateway_status.cron_failed', { agentId: agent.id, ...errorFields(c.reason) })
  } catch (e) {
    error = e instanceof RuntimeProviderError || isGatewayTokenUnreadable(e) ? e.message : 'Gateway check failed'
    log.warn('gateway_status.unreachable', { agentId: agent.id, error, ...errorFields(e) })
  }
  const list = sessions ?? []
  const lastActive = (s: GatewaySession) => (typeof s.lastActive === 'string' ? Date.parse(s.lastActive) : Number.NaN)
  const recent = [...list].sort((a, b) => (lastActive(b) || 0) - (lastActive(a) || 0))
  return {
    health: sessions ? ('healthy' as const) : ('unreachable' as const),
    healthDetail: sessions ? { ok: true as const, status: 200 } : { ok: false as const, error: error ?? 'Gateway check failed' },
    sessions: {
      total: list.length,
      active: list.filter((s) => now - lastActive(s) <= ACTIVE_SESSION_MS).length,
      list: recent.slice(0, LISTED_SESSIONS).map((s) => ({ id: String(s.id), channel: String(s.channel), lastActive: isoOrNull(s.lastActive), messages: count(s.messages) })),
    },
    cron: {
      total: jobs.length,
      enabled: jobs.filter((j) => j.enabled === true).length,
      jobs: jobs.slice(0, LISTED_CRON_JOBS).map((j) => ({ id: String(j.id), name: String(j.name), enabled: j.enabled === true, schedule: String(j.frequency), lastRun: isoOrNull(j.lastRun), nextRun: isoOrNull(j.nextRun) })),
    },
  }
}

// The runtime's answer is not trusted to have the documented types: an entry that is no object (null, a
// number) is dropped rather than read (reading a field of null would be a 500).
const isEntry = <T>(v: T): v is T & object => typeof v === 'object' && v !== null && !Array.isArray(v)
const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0)
const isoOrNull = (v: unknown) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : null)
