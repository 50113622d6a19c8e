import { eq } from 'drizzle-orm'
import { agentGateway } from '../../lib/agents/access'
import { requirePaidAccess } from '../../lib/auth/plan'
import { withUser } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import { HEARTBEAT_JOB_ID, heartbeatFrequency, type CronJob, type HeartbeatFrequency } from '../../lib/runtime/provider'
import { agents, type Agent } from '../../schema'
import { chosenAgent, iso, type SignedInContext } from './shared'

/** The gateway's heartbeat job, or null when it has none or cannot be read (then the database answers). */
async function gatewayJob(c: SignedInContext, agent: Agent): Promise<CronJob | null> {
  try {
    const jobs = await (await agentGateway(c.var.services, agent)).cronJobs()
    return jobs.find((j) => j.id === HEARTBEAT_JOB_ID) ?? null
  } catch (e) {
    log.warn('heartbeat.gateway_read_failed', { agentId: agent.id, ...errorFields(e) })
    return null
  }
}

/** `GET /api/heartbeat`: the gateway's job first, else the database's setting. */
export async function readHeartbeat(c: SignedInContext, agentId: string | undefined) {
  const agent = await chosenAgent(c, agentId)
  const job = agent ? await gatewayJob(c, agent) : null
  if (job) return { source: 'gateway' as const, enabled: job.enabled, frequency: job.frequency, nextRun: job.nextRun, lastRun: job.lastRun }
  if (!agentId || !agent) return { source: 'db' as const, enabled: false, message: 'No heartbeat job on the gateway; pass agentId to read the stored setting' }
  return {
    source: 'db' as const,
    enabled: agent.heartbeatEnabled,
    frequency: heartbeatFrequency(agent.heartbeatFrequency),
    message: agent.heartbeatMessage ?? 'The gateway has no heartbeat job or could not be reached: the stored setting is shown',
  }
}

/**
 * `PUT` (and the deprecated `POST` and `DELETE`) `/api/heartbeat`: written to the gateway of `agentId` (default
 * the caller's instance); the stored setting follows it. Enabling needs paid access (402); disabling does not. When the gateway write fails, the setting is stored
 * only, which needs `agentId` (400 `agentId required` without it).
 */
export async function writeHeartbeat(c: SignedInContext, req: { agentId?: string; frequency?: HeartbeatFrequency; enabled: boolean }) {
  // Enabling sets the runtime working on a schedule: a use, which needs paid access. Disabling stays open.
  if (req.enabled) await requirePaidAccess(c.var.services, c.var.user.id)
  const agent = await chosenAgent(c, req.agentId)
  const frequency = req.frequency ?? heartbeatFrequency(agent?.heartbeatFrequency ?? '1h')
  let source: 'gateway' | 'db' = 'db'
  let written = { enabled: req.enabled, frequency }
  if (agent) {
    try {
      const job = await (await agentGateway(c.var.services, agent)).setHeartbeat({ enabled: req.enabled, frequency })
      source = 'gateway'
      written = { enabled: job.enabled, frequency: job.frequency }
    } catch (e) {
      log.warn('heartbeat.gateway_write_failed', { agentId: agent.id, ...errorFields(e) })
    }
  }
  if (source === 'db' && !req.agentId) throw new ApiError('VALIDATION', 'agentId required')
  if (agent) {
    const message = source === 'gateway' ? null : `Stored ${iso(new Date())}: the gateway could not be written`
    await withUser(c.var.services.db, agent.userId, (tx) =>
      tx
        .update(agents)
        .set({ heartbeatEnabled: written.enabled, heartbeatFrequency: written.frequency, heartbeatMessage: message, updatedAt: new Date() })
        .where(eq(agents.id, agent.id)),
    )
  }
  return { success: true as const, source, ...written }
}
