import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { TOKEN_UNREADABLE_DOC } from '../../../lib/agents/access'
import { noInstance } from '../../../lib/agents/instance'
import { runLifecycle } from '../../../lib/agents/lifecycle'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { LifecycleResultSchema } from '../schemas'
import { chosenAgent } from '../shared'

const agentId = z
  .string({ error: 'agentId must be a string' })
  .min(1, 'agentId must not be empty')
  .max(255, 'Agent not found')
  .optional()
  .openapi({ description: 'One of the caller’s agents; default the caller’s instance' })
const action = (name: 'repair' | 'update' | 'reset-memory', description: string) =>
  z.object({ action: z.literal(name).openapi({ description }), agentId }, { error: 'Request body must be a JSON object' })

const MaintenanceBody = z
  .discriminatedUnion('action', [
    action('repair', 'Redeploy from the current image and configuration'),
    action('update', 'Move to the platform’s current runtime image (`RUNTIME_IMAGE`) and redeploy'),
    action('reset-memory', 'Clear the runtime’s memory through its gateway; the runtime keeps running'),
  ])
  .openapi('RuntimeMaintenance')

export const route = signedInRoute(
  limitedRoute(limits.instance, limitedRoute(limits.instancePerUser, {
    method: 'post',
    path: '/api/runtime/maintenance',
    operationId: 'runRuntimeMaintenance',
    tags: ['Instance'],
    summary: 'Repair, update or reset the memory of one of the caller’s runtimes',
    description:
      'Counts against the same limits as `/api/instance/*` (30 per minute per client address, 30 per user). `repair` and `update` record the agent `starting`; `reset-memory` changes no status. ' +
      '`repair` of an agent whose stored gateway token this server cannot open (or that has none) redeploys it with a new token. ' +
      `Each needs paid access at the moment of use (${PAID_ACCESS_RULE}); a \`suspended\` agent must be started first.`,
    request: { body: jsonBody(MaintenanceBody) },
    responses: {
      200: ok(LifecycleResultSchema),
      400: errorResponse('Unknown or missing `action` (`INVALID_ACTION`); a malformed `agentId` (`VALIDATION`); or invalid JSON'),
      402: errorResponse(PLAN_REQUIRED_DOC),
      404: errorResponse('`Agent not found` (not the caller’s); `No instance found. Please deploy first.`; or the provider has no such runtime (`NOT_FOUND`)'),
      409: errorResponse(`The runtime is busy with another operation (\`CONFLICT\`); the agent is \`suspended\` (\`INVALID_TRANSITION\`); or, for \`update\` and \`reset-memory\`, ${TOKEN_UNREADABLE_DOC} (\`repair\` re-keys it)`),
      502: errorResponse('The runtime provider or the runtime failed (`RUNTIME_UNAVAILABLE`)'),
    },
  })),
)

export const handler: RouteHandler<typeof route> = async (c) => {
  const body = c.req.valid('json')
  const agent = await chosenAgent(c, body.agentId)
  if (!agent) throw noInstance()
  const after = await runLifecycle(c.var.services, agent, body.action)
  return c.json({ success: true as const, action: body.action, agentId: after.id, status: after.status, deployed: false }, 200)
}
