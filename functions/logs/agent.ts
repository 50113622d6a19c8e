import type { Context } from 'hono'
import { findOwnAgent, runtimeTarget } from '../../lib/agents/access'
import type { SignedInEnv } from '../../lib/context'
import { errorResponse } from '../../lib/http/openapi'

/** Every `/api/logs/:agentId/*` route's 404: another user's agent is the same answer as a missing one. */
export const agentNotFoundResponse = errorResponse('`Agent not found`: no such agent, or not the caller’s (`NOT_FOUND`)')

/** The caller's agent `agentId` (404 otherwise) and its runtime target. */
export async function ownAgentTarget(c: Context<SignedInEnv>, agentId: string) {
  const { db, config } = c.var.services
  const agent = await findOwnAgent(db, c.var.user.id, agentId)
  // Logs are read by service id or name: the gateway token is not needed (nor opened).
  return { agent, target: await runtimeTarget(config, agent, { token: false }) }
}
