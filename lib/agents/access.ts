import { and, eq } from 'drizzle-orm'
import type { Config } from '../config'
import type { Db } from '../db/rls'
import { withUser } from '../db/rls'
import { ApiError } from '../http/errors'
import { RuntimeProviderError, type RuntimeGateway, type RuntimeTarget } from '../runtime/provider'
import type { Services } from '../context'
import { log } from '../log'
import { open, seal, SealedValueUnreadable } from '../secret-box'
import { agents, type Agent } from '../../schema'

/** What a gateway token is sealed for (secret-box additional data, with the agent's owner). */
export const GATEWAY_TOKEN_PURPOSE = 'agent-gateway'

export const agentNotFound = () => new ApiError('NOT_FOUND', 'Agent not found')

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

/**
 * 409 `SECRET_UNREADABLE`: the agent's token is sealed under a key this server does not have (its keys changed or a
 * local server's generated secret was lost). Nothing that needs the token can run; `POST /api/agents/{id}/repair`
 * gives the agent a new one, `DELETE /api/agents/{id}` removes it without.
 */
export const gatewayTokenUnreadable = () =>
  new ApiError('SECRET_UNREADABLE')

/** The OpenAPI wording of that answer, for every route that needs the token. */
export const TOKEN_UNREADABLE_DOC =
  "the agent's stored gateway token cannot be read with this server's keys (`SECRET_UNREADABLE`): repair it (`POST /api/agents/{id}/repair`) for a new token, or delete it"

/** Whether `e` is the answer above (callers that report rather than throw tell it apart from a runtime failure). */
export const isGatewayTokenUnreadable = (e: unknown): e is ApiError => e instanceof ApiError && e.code === 'SECRET_UNREADABLE'

/**
 * The agent's gateway token in the clear (owner-only routes and runtime calls), or null when it has none; 409
 * `SECRET_UNREADABLE` when it has one this server cannot open.
 */
export async function openGatewayToken(config: Config, agent: Pick<Agent, 'id' | 'userId' | 'gatewayToken' | 'gatewayTokenKeyId'>) {
  if (!agent.gatewayToken || !agent.gatewayTokenKeyId) return null
  try {
    return await open(config, { keyId: agent.gatewayTokenKeyId, sealed: agent.gatewayToken }, agent.userId, GATEWAY_TOKEN_PURPOSE)
  } catch (e) {
    if (!(e instanceof SealedValueUnreadable)) throw e
    log.warn('agent.gateway_token_unreadable', { agentId: agent.id, keyId: e.keyId, why: e.why })
    throw gatewayTokenUnreadable()
  }
}

/** The runtime service name of an agent: what Railway's fallback lookup matches (`agent-<id>`). */
export const runtimeName = (agentId: string) => `agent-${agentId}`

/**
 * The provider's view of an agent: its persisted service id and URL first, its token opened (409
 * `SECRET_UNREADABLE` when it cannot be). `{token: false}` leaves the token out (null) without opening it: for
 * what the provider does by service alone (stop, delete, logs), so those work whatever became of the keys.
 */
export async function runtimeTarget(config: Config, agent: Agent, opts: { token?: boolean } = {}): Promise<RuntimeTarget> {
  return {
    agentId: agent.id,
    name: runtimeName(agent.id),
    serviceId: agent.runtimeServiceId,
    url: agent.runtimeUrl,
    gatewayToken: opts.token === false ? null : await openGatewayToken(config, agent),
    gatewayTimeoutMs: config.RUNTIME_GATEWAY_TIMEOUT_MS,
  }
}

/**
 * The agent's runtime gateway API; 404 `RuntimeProviderError` when it has none (no URL or no token yet), 409
 * `SECRET_UNREADABLE` when its token cannot be opened.
 */
export async function agentGateway(services: Pick<Services, 'config' | 'runtimes'>, agent: Agent): Promise<RuntimeGateway> {
  const target = await runtimeTarget(services.config, agent)
  if (!target.url || !target.gatewayToken) throw new RuntimeProviderError('The agent has no runtime gateway', 404, 'runtime')
  return services.runtimes.gateway(target)
}
