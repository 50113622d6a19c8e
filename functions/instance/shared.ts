import type { MiddlewareHandler } from 'hono'
import { createMiddleware } from 'hono/factory'
import { findOwnAgent, runtimeName } from '../../lib/agents/access'
import { findInstanceAgent, noInstance } from '../../lib/agents/instance'
import { readSession } from '../../lib/auth/session'
import type { AppEnv, Services, SessionUser, SignedInEnv } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import type { Agent } from '../../schema'

/** `GET /api/instance/:userId` answers 403 (not 401) without a session, as the spec says. */
export const sessionOr403 = createMiddleware<AppEnv>(async (c, next) => {
  if (!(await readSession(c))) throw new ApiError('FORBIDDEN')
  await next()
}) as unknown as MiddlewareHandler<SignedInEnv>

/** What the helpers below read of a signed-in request's context. */
export type SignedInContext = { var: { services: Services; user: SessionUser } }

export const notOwner = () => new ApiError('FORBIDDEN')

/** The caller's instance agent for `:userId` (the instance id is the user id): 403 for another id, 404 without one. */
export async function ownInstance(c: SignedInContext, userId: string): Promise<Agent> {
  if (userId !== c.var.user.id) throw notOwner()
  const agent = await findInstanceAgent(c.var.services.db, userId)
  if (!agent) throw noInstance()
  return agent
}

/** `agentId` when given (one of the caller's agents, else 404 `Agent not found`), else the caller's instance (or null). */
export const chosenAgent = (c: SignedInContext, agentId: string | undefined) =>
  agentId ? findOwnAgent(c.var.services.db, c.var.user.id, agentId) : findInstanceAgent(c.var.services.db, c.var.user.id)

/** The runtime URL the platform has stored, else the default a managed runtime gets (`https://agent-<id>.up.railway.app`). */
export const instanceUrl = (agent: Agent) => agent.runtimeUrl ?? `https://${runtimeName(agent.id)}.up.railway.app`

/** Platform default when the runtime reports no version. */
export const DEFAULT_RUNTIME_VERSION = 'unknown'

export const iso = (d: Date | null) => (d ? d.toISOString() : null)
