import type { RouteHandler } from '@hono/zod-openapi'
import { TOKEN_UNREADABLE_DOC } from '../../lib/agents/access'
import { runLifecycle, type LifecycleAction } from '../../lib/agents/lifecycle'
import { limits } from '../../lib/http/limits'
import { errorResponse, ok } from '../../lib/http/openapi'
import { limitedRoute } from '../../lib/http/rate-limit'
import { signedInRoute } from '../../lib/http/routes'
import { LifecycleResultSchema, UserIdParams } from './schemas'
import { ownInstance } from './shared'

/** One `POST /api/instance/{userId}/<action>` route: session, ownership, 30/min per IP and 30/min per user. */
export const instanceActionRoute = <const A extends string>(action: A, operationId: string, summary: string, description: string, extra: Record<number, ReturnType<typeof errorResponse>> = {}) =>
  signedInRoute(
    limitedRoute(limits.instance, limitedRoute(limits.instancePerUser, {
      method: 'post',
      path: `/api/instance/{userId}/${action}` as `/api/instance/{userId}/${A}`,
      operationId,
      tags: ['Instance'],
      summary,
      description,
      request: { params: UserIdParams },
      responses: {
        200: ok(LifecycleResultSchema),
        403: errorResponse('`userId` is not the caller; or sent from a foreign `Origin` (`FORBIDDEN`, `ORIGIN_NOT_ALLOWED`)'),
        404: errorResponse('`No instance found. Please deploy first.`; or the provider has no such runtime (`NOT_FOUND`)'),
        409: errorResponse(`The runtime is busy with another operation (\`CONFLICT\`); the agent is \`suspended\` and this is not \`start\` (\`INVALID_TRANSITION\`); or ${TOKEN_UNREADABLE_DOC} (\`stop\` never needs it)`),
        502: errorResponse('The runtime provider or the runtime failed; the agent is recorded as `error` (`RUNTIME_UNAVAILABLE`)'),
        ...extra,
      },
    })),
  )

type ActionRoute = ReturnType<typeof instanceActionRoute>

/** The handler of an action on the caller's existing instance. */
export const instanceActionHandler =
  (action: LifecycleAction): RouteHandler<ActionRoute> =>
  async (c) => {
    const { userId } = c.req.valid('param')
    const agent = await ownInstance(c, userId)
    const after = await runLifecycle(c.var.services, agent, action)
    return c.json({ success: true as const, action, agentId: after.id, status: after.status, deployed: false }, 200)
  }
