import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { agentJson } from '../../../lib/agents/lifecycle'
import { assertProvisioningOpen, defaultAgentName, provisionAgent, provisioningPlan } from '../../../lib/agents/provision'
import { API_KEY_PREFIX } from '../../../lib/auth/api-keys'
import { PLAN_RECORD_COLUMNS } from '../../../lib/auth/plan'
import { isAdmin } from '../../../lib/auth/session'
import { bearerToken, requireSharedKey } from '../../../lib/auth/shared-key'
import type { AppEnv } from '../../../lib/context'
import { asService } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { describeLimit, limitedRoute, rateLimit } from '../../../lib/http/rate-limit'
import { users } from '../../../schema'
import { AgentConfigSchema, AgentNameField, AgentSchema, AiProviderField } from '../../../lib/agents/schemas'
import { identityOrKeyDocs, resolveCaller } from '../identity-or-key'

const Body = z
  .object(
    {
      userId: z.string().min(1).max(255).optional().openapi({ description: 'Whose runtime to create: required with the shared key, ignored otherwise (the caller is the identity)' }),
      name: AgentNameField.optional(),
      aiProvider: AiProviderField.optional(),
      config: AgentConfigSchema.optional(),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('CreateDeployment')

// The requests that authenticated with the shared key (the platform itself), as opposed to a user's identity.
const sharedKeyCalls = new WeakSet<Request>()

/**
 * `Authorization: Bearer <INTERNAL_API_KEY>` is the shared key (500 when unset, 403 when it does not match); a
 * `Bearer sk_...` user key or signed identity headers name the caller otherwise (their 401s).
 */
const deploymentCaller = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c.req.header('authorization'))
  if (token && !token.startsWith(API_KEY_PREFIX)) {
    await requireSharedKey(c, async () => {
      sharedKeyCalls.add(c.req.raw)
    })
  } else {
    await resolveCaller(c)
  }
  await next()
})

export const route = createRoute(
  limitedRoute(
    limits.backend,
    {
      method: 'post',
      path: '/api/deployments',
      operationId: 'createDeployment',
      tags: ['Agents'],
      summary: "Create the caller's cloud runtime (an agent) through the runtime provider",
      description:
        'Caller: the shared key (`Authorization: Bearer <INTERNAL_API_KEY>`, then `userId` in the body names the user), a ' +
        'user API key (`Bearer sk_...`) or signed identity headers (the identity is the user). The same checks and ' +
        'provisioning as the web `POST /api/provision`: kill switch 503, provisioning disabled 500, paid access (a paid plan, ' +
        'or the live trial of an account with a verified real mailbox) unless the user is an admin (403 `Active subscription required`), the plan’s agent count (429 `AGENT_LIMIT`), ' +
        'a provider failure 502 with the agent kept in status `error`. Never the gateway token.',
      // Both of the spec's limits: every backend /api route's, then this route's 5/min (whose headers it answers with).
      middleware: [rateLimit(limits.deployments), deploymentCaller],
      security: [{ sharedKey: [] }, ...(identityOrKeyDocs.security ?? [])],
      parameters: identityOrKeyDocs.parameters,
      request: { body: { content: { 'application/json': { schema: Body } }, required: true } },
      responses: {
        201: ok(z.object({ success: z.literal(true), agent: AgentSchema, url: z.string().max(2048).nullable() }).openapi('Deployment'), 'Created; the runtime is `starting`'),
        400: errorResponse('`userId required` with the shared key; or a field is invalid (`VALIDATION`)'),
        401: errorResponse('No credentials, an unknown API key (`INVALID_API_KEY`), or identity headers unsigned (`SIGNATURE_REQUIRED`) or badly signed (`INVALID_SIGNATURE`)'),
        403: errorResponse('`Forbidden`: a Bearer token that is not the shared key (`FORBIDDEN`); or `Active subscription required` (`SUBSCRIPTION_REQUIRED`)'),
        404: errorResponse('`User not found` (`USER_NOT_FOUND`)'),
        409: errorResponse('The user already has an agent of this name (`CONFLICT`)'),
        429: errorResponse(`The plan’s agent count is reached (\`AGENT_LIMIT\`); or over ${describeLimit(limits.deployments)}: \`${limits.deployments.message}\` (\`RATE_LIMITED\`)`),
        500: errorResponse('`Provisioning is disabled` (`PROVISIONING_DISABLED`); `Server misconfigured` (`MISCONFIGURED`); or an internal error'),
        502: errorResponse('The runtime provider failed; the agent is kept in status `error` (`RUNTIME_UNAVAILABLE`)'),
        503: errorResponse('`Provisioning is temporarily paused`: the kill switch is on (`PROVISIONING_PAUSED`)'),
      },
    },
  ),
)

async function findUser(c: Context<AppEnv>, userId: string) {
  const [row] = await asService(c.var.services.db, 'identityLookup', (tx) =>
    tx
      .select({ id: users.id, ...PLAN_RECORD_COLUMNS })
      .from(users)
      .where(eq(users.id, userId))
      .limit(1),
  )
  if (!row) throw new ApiError('USER_NOT_FOUND')
  return row
}

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { services } = c.var
  const body = c.req.valid('json')
  assertProvisioningOpen(services.config)
  const userId = sharedKeyCalls.has(c.req.raw) ? body.userId : c.var.identity?.userId
  if (!userId) throw new ApiError('VALIDATION', 'userId required')
  const user = await findUser(c, userId)
  const admin = isAdmin(c, user)
  const agent = await provisionAgent(services, {
    userId: user.id,
    plan: provisioningPlan(user, services.config),
    name: body.name ?? defaultAgentName(),
    aiProvider: body.aiProvider ?? null,
    config: body.config,
    bypassLimit: admin,
  })
  return c.json({ success: true as const, agent: agentJson(agent), url: agent.runtimeUrl }, 201)
}
