import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { createMiddleware } from 'hono/factory'
import { agentJson } from '../../../lib/agents/lifecycle'
import { assertProvisioningOpen, defaultAgentName, provisionAgent, provisioningPlan } from '../../../lib/agents/provision'
import { planRecord } from '../../../lib/auth/plan'
import { provisionSession } from '../provision-session'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { AgentConfigSchema, AgentNameField, AgentSchema, AiProviderField } from '../../../lib/agents/schemas'

const Body = z
  .object(
    {
      name: AgentNameField.optional().openapi({ description: 'Unique among the caller’s agents; `agent-` and 6 hex characters when absent' }),
      aiProvider: AiProviderField.optional(),
      config: AgentConfigSchema.optional(),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('ProvisionAgent')

/**
 * Every check before the body is read, in the documented order: the caller by spec "Authentication" 5 (the session,
 * with the admin session fallback), the limits (per IP, then per user), the switches, the plan. Sets `user` and `plan`.
 */
const provisionGate = createMiddleware<AppEnv>(async (c, next) => {
  const user = await provisionSession(c)
  c.set('user', user)
  await enforceRateLimit(c, limits.provision)
  await enforceRateLimit(c, limits.provisionPerUser)
  assertProvisioningOpen(c.var.services.config)
  if (user.synthetic) {
    // The synthetic admin session (no user row) cannot own an agent: agents belong to accounts.
    throw new ApiError('FORBIDDEN', 'Sign in with an account to provision')
  }
  c.set('plan', provisioningPlan(await planRecord(c.var.services.db, user.id), c.var.services.config))
  await next()
})

export const route = createRoute(
  limitedRoute(
    limits.provision,
    limitedRoute(limits.provisionPerUser, {
      method: 'post',
      path: '/api/provision',
      operationId: 'provisionAgent',
      tags: ['Agents'],
      summary: 'Provision an agent and its runtime',
      description:
        'Order of checks: the session (401); the rate limits (5 per minute per client address, as the spec says, and ' +
        '5 per minute per user in addition); the kill switch `PROVISIONING_KILL_SWITCH` (503); ' +
        '`PROVISIONING_ENABLED` unset (500, as the backend health says: provisioning disabled → 500); a paid plan ' +
        '(active or past due), or the live trial of an account with a verified real mailbox (a wallet or Farcaster ' +
        'address is not one), unless an admin (403 `Active subscription required`); the body; the plan’s ' +
        'agent count (solo 1, collective 3, label 10, network unlimited; atomic: of two concurrent creates at the limit ' +
        'one wins). The agent runs under the caller’s plan (a trial’s is solo; an admin’s network, without a count limit). ' +
        'The record is made first, then the runtime through the provider; a provider failure keeps the record in status ' +
        '`error` and answers 502. The answer never carries the gateway token (`GET /api/agents/{id}/token`).',
      middleware: [provisionGate],
      security: [{ session: [] }],
      request: { body: jsonBody(Body) },
      responses: {
        201: ok(z.object({ success: z.literal(true), agent: AgentSchema, url: z.string().max(2048).nullable().openapi({ description: "The runtime's URL" }) }).openapi('ProvisionedAgent'), 'Provisioned; the runtime is `starting`'),
        400: errorResponse('A field is invalid (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
        401: errorResponse('No session (`UNAUTHORIZED`)'),
        403: errorResponse('`Active subscription required` (`SUBSCRIPTION_REQUIRED`); or a foreign `Origin` (`ORIGIN_NOT_ALLOWED`); or an admin session without an account (`FORBIDDEN`)'),
        409: errorResponse('Another of the caller’s agents has this name (`CONFLICT`)'),
        429: errorResponse('The plan’s agent count is reached (`AGENT_LIMIT`, with `limit` and `plan`)'),
        500: errorResponse('`Provisioning is disabled` (`PROVISIONING_DISABLED`); or an internal error'),
        502: errorResponse('The runtime provider failed; the agent is kept in status `error` (`RUNTIME_UNAVAILABLE`)'),
        503: errorResponse('`Provisioning is temporarily paused`: the kill switch is on (`PROVISIONING_PAUSED`)'),
      },
    }, 'handler'),
    'handler',
  ),
)

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { services } = c.var
  const user = c.var.user!
  const plan = c.var.plan!
  const body = c.req.valid('json')
  const agent = await provisionAgent(services, {
    userId: user.id,
    plan,
    name: body.name ?? defaultAgentName(),
    aiProvider: body.aiProvider ?? null,
    config: body.config,
    bypassLimit: user.isAdmin,
  })
  return c.json({ success: true as const, agent: agentJson(agent), url: agent.runtimeUrl }, 201)
}
