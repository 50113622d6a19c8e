import { and, eq } from 'drizzle-orm'
import type { Config } from '../config'
import type { Db } from '../db/client'
import { withUser } from '../db/rls'
import { ApiError } from '../http/errors'
import { RuntimeProviderError, type RuntimeGateway, type RuntimeTarget } from '../runtime/provider'
import type { Services } from '../context'
import { open, seal } from '../secret-box'
import { agents, type Agent } from '../../schema'

/** What a gateway token is sealed for (secret-box additional data, with the agent's owner). */
export const GATEWAY_TOKEN_PURPOSE = 'agent-gateway'

export const agentNotFound = () => new ApiError(404, 'Agent not found', { code: 'NOT_FOUND' })

/**
 * The caller's agent `agentId`, read as the caller: another user's agent is invisible under RLS, so it is the
 * same 404 as an agent that does not exist (no existence leak).
 */
export async function findOwnAgent(db: Db, userId: string, agentId: string): Promise<Agent> {
  const [agent] = await withUser(db, userId, (tx) =>
    tx.select().from(agents).where(and(eq(agents.id, agentId), eq(agents.userId, userId))).limit(1),
  )
  if (!agent) throw agentNotFound()
  return agent
}

/** A fresh gateway token (256 bits, hex) sealed for the agent's owner: what `agents.gatewayToken` stores. */
export async function newGatewayToken(config: Config, userId: string) {
  const token = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('')
  const { keyId, sealed } = await seal(config, token, userId, GATEWAY_TOKEN_PURPOSE)
  return { token, gatewayTokenKeyId: keyId, gatewayToken: sealed }
}

/** The agent's gateway token in the clear (owner-only routes and runtime calls), or null when it has none. */
export async function openGatewayToken(config: Config, agent: Pick<Agent, 'userId' | 'gatewayToken' | 'gatewayTokenKeyId'>) {
  if (!agent.gatewayToken || !agent.gatewayTokenKeyId) return null
  return open(config, { keyId: agent.gatewayTokenKeyId, sealed: agent.gatewayToken }, agent.userId, GATEWAY_TOKEN_PURPOSE)
}

/** The runtime service name of an agent: what Railway's fallback lookup matches (`agent-<id>`). */
export const runtimeName = (agentId: string) => `agent-${agentId}`

/** The provider's view of an agent: its persisted service id and URL first, its token opened. */
export async function runtimeTarget(config: Config, agent: Agent): Promise<RuntimeTarget> {
  return {
    agentId: agent.id,
    name: runtimeName(agent.id),
    serviceId: agent.runtimeServiceId,
    url: agent.runtimeUrl,
    gatewayToken: await openGatewayToken(config, agent),
  }
}

/** The agent's runtime gateway API; 404 `RuntimeProviderError` when it has none (no URL or no token yet). */
export async function agentGateway(services: Pick<Services, 'config' | 'runtimes'>, agent: Agent): Promise<RuntimeGateway> {
  const target = await runtimeTarget(services.config, agent)
  if (!target.url || !target.gatewayToken) throw new RuntimeProviderError('The agent has no runtime gateway', 404, 'runtime')
  return services.runtimes.gateway(target)
}
