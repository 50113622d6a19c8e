import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { TOKEN_UNREADABLE_DOC } from '../../../lib/agents/access'
import { type BACKEND_LIFECYCLE_ACTIONS, agentJson, findAgentAsService, runLifecycle } from '../../../lib/agents/lifecycle'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { requireSharedKey } from '../../../lib/auth/shared-key'
import type { AppEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { AgentSchema } from '../../../lib/agents/schemas'

type Action = (typeof BACKEND_LIFECYCLE_ACTIONS)[number]

const OPERATION: Record<Action, string> = { start: 'backendStartAgent', stop: 'backendStopAgent', restart: 'backendRestartAgent', repair: 'backendRepairAgent' }

/** Backend `POST /api/agents/{id}/<action>` behind the shared key: any user's agent, the same lifecycle as the web's. */
export function backendLifecycleRoute<A extends Action>(action: A) {
  const route = createRoute(
    limitedRoute(limits.backend, {
      method: 'post',
      path: `/api/agents/{id}/${action}` as `/api/agents/{id}/${A}`,
      operationId: OPERATION[action],
      tags: ['Agents'],
      summary: `${action[0].toUpperCase()}${action.slice(1)} an agent's runtime (shared key)`,
      description:
        "For the platform's own services: `Authorization: Bearer <INTERNAL_API_KEY>`. Any user's agent by id; the same " +
        'provider call and status change as the web `POST /api/agents/{id}/' + action + '`.' +
        (action === 'stop' ? '' : ` The agent's owner must have paid access at the moment of use (${PAID_ACCESS_RULE}): 402 otherwise, the shared key notwithstanding.`),
      middleware: [requireSharedKey],
      security: [{ sharedKey: [] }],
      request: { params: z.object({ id: z.string().max(255).openapi({ param: { name: 'id', in: 'path' }, description: 'The agent id' }) }) },
      responses: {
        200: ok(AgentSchema, 'The agent as stored afterwards'),
        401: errorResponse('`Unauthorized`: no Bearer token (`UNAUTHORIZED`)'),
        403: errorResponse('`Forbidden`: not the shared key (`FORBIDDEN`)'),
        ...(action === 'stop' ? {} : { 402: errorResponse(PLAN_REQUIRED_DOC) }),
        404: errorResponse('`Agent not found`, or the provider has no runtime for it (`NOT_FOUND`)'),
        409: errorResponse(
          `A template agent, or a \`suspended\` one and this is not \`start\` (\`INVALID_TRANSITION\`); the provider refused the operation (\`CONFLICT\`); or ${TOKEN_UNREADABLE_DOC} (\`stop\` never needs it, \`repair\` re-keys)`,
        ),
        ...(action === 'start' ? { 429: errorResponse('Resuming a `suspended` agent: its owner’s plan is full (`AGENT_LIMIT`)') } : {}),
        500: errorResponse('`Server misconfigured`: `INTERNAL_API_KEY` unset (`MISCONFIGURED`); or an internal error'),
        502: errorResponse('The runtime provider failed (`RUNTIME_UNAVAILABLE`); the agent is left in status `error`'),
      },
    }),
  )
  const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
    const agent = await findAgentAsService(c.var.services.db, c.req.valid('param').id)
    return c.json(agentJson(await runLifecycle(c.var.services, agent, action)), 200)
  }
  return { route, handler }
}
