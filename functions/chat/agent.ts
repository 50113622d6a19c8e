import { and, eq, ne } from 'drizzle-orm'
import type { Services } from '../../lib/context'
import { assertPaidAccess, PLAN_RECORD_COLUMNS } from '../../lib/auth/plan'
import { ApiError } from '../../lib/http/errors'
import { agents, users, type Agent } from '../../schema'

/**
 * The agent a user's chat goes to (and whose gateway `GET /api/gateway/status` reads): among the user's agents
 * that are not templates and have a provisioned runtime (a `runtimeServiceId` or a `runtimeUrl`), a `running` one
 * first and a `suspended` one last, then the most recently created. One statement as the user: the user's row joined to those agents.
 *
 * 404 `User not found` (the session outlived its account); with `paid` (a chat: a use), 402 `PLAN_REQUIRED`
 * without paid access, from the same row; `No agent found` (no agent but templates), `No OpenClaw instance found`
 * (no agent with a runtime).
 */
export async function findChatAgent(services: Pick<Services, 'reader' | 'config'>, userId: string, opts: { paid?: boolean } = {}): Promise<Agent> {
  const rows = await services.reader.asUser(userId, (db) =>
    db
      .select({ userId: users.id, owner: PLAN_RECORD_COLUMNS, agent: agents })
      .from(users)
      .leftJoin(agents, and(eq(agents.userId, users.id), ne(agents.status, 'template')))
      .where(eq(users.id, userId)),
  )
  if (rows.length === 0) throw new ApiError('USER_NOT_FOUND')
  if (opts.paid) assertPaidAccess(rows[0].owner, services.config)
  const mine = rows.flatMap((r) => (r.agent ? [r.agent] : []))
  if (mine.length === 0) throw new ApiError('NOT_FOUND', 'No agent found')
  const provisioned = mine.filter((a) => a.runtimeServiceId || a.runtimeUrl)
  if (provisioned.length === 0) throw new ApiError('NOT_FOUND', 'No OpenClaw instance found')
  return provisioned.sort(preferred)[0]
}

/** `running` first, `suspended` last (its runtime is stopped), then the newest (the id breaks a tie, so the choice is stable). */
const rank = (a: Agent) => (a.status === 'running' ? 2 : a.status === 'suspended' ? 0 : 1)
const preferred = (a: Agent, b: Agent) => rank(b) - rank(a) || b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)
