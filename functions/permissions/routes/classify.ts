import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { classifyToolCall } from '../hooks/classify'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { errorFields, log } from '../../../lib/log'
import { requestMessage } from '../messages'
import { createPermissionRequest, MAX_STORED_TOOL_INPUT_CHARS, PERMISSION_EXPIRY_PATH, PERMISSION_TTL_MS } from '../requests'
import { notifyDashboards } from '../sockets'
import { internalKeyResponses, requireInternalKey } from '../internal-key'
import { ClassifyBody, ClassifyResult, MAX_TOOL_INPUT_DEPTH } from '../schemas'

export const route = createRoute({
  method: 'post',
  path: '/api/hooks/classify',
  operationId: 'classifyToolCall',
  tags: ['Hooks'],
  summary: "Classify an agent's tool call (internal key)",
  description:
    "Called by an agent's runtime before each tool call, with `Authorization: Bearer <INTERNAL_API_KEY>`. Answers the tier: " +
    '`safe` → `allow: true`; `dangerous` → `allow: false` and a `requestId`; `destructive` → `allow: false`, never askable. ' +
    '`bash`, `exec` and `shell` are classified from the command; `write` and `file_write` are dangerous for sensitive paths ' +
    '(`.env`, credentials, `.ssh`), else safe; `read` and `file_read` are always safe; unknown tools are dangerous. The hook is ' +
    'fail-closed: any answer but a 200 (or no answer) means the call is denied.\n\n' +
    "A dangerous call becomes a persistent permission request for its owner: the owner of the agent `agentId` names (whatever " +
    '`userId` says), else `userId` when it names a user, else nobody (the request is recorded but no one can see or approve it, so the call stays ' +
    "denied). The owner's open dashboards get it at once on `GET /api/permissions/socket` as `permission_request`; one that " +
    'connects later gets it then (a failed push never fails this call). The runtime then polls ' +
    '`GET /api/hooks/permissions/{requestId}` until the owner approves or denies it (`POST /api/permissions/{requestId}` or a ' +
    'socket `decision`). Undecided 10 minutes after its creation, the request expires: a denial. Its expiry is published on ' +
    'the queue, delayed 10 minutes, to `POST /api/queue/permission-expiry`, which tells the owner’s dashboards (a queue that ' +
    'refuses it fails nothing here: the poll, list and decisions judge the expiry themselves). ' +
    `A request keeps at most ${MAX_STORED_TOOL_INPUT_CHARS} characters of \`toolInput\`'s JSON. ` +
    'Not rate limited: only the platform holds the key, and every agent tool call passes here.',
  middleware: [requireInternalKey] as const,
  security: [{ sharedKey: [] }],
  request: { body: jsonBody(ClassifyBody) },
  responses: {
    200: ok(ClassifyResult, 'The tier; `requestId` only for `dangerous`'),
    400: errorResponse(
      `\`toolName required\` (missing, not a string or empty), \`toolInput must be an object\`, nesting past ${MAX_TOOL_INPUT_DEPTH} ` +
        'levels, or a field over its length (`VALIDATION`); or invalid JSON (`INVALID_JSON`)',
    ),
    ...internalKeyResponses,
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { toolName, toolInput, agentId, userId } = c.req.valid('json')
  const { tier, reason } = classifyToolCall(toolName, toolInput)
  if (tier !== 'dangerous') return c.json({ allow: tier === 'safe', tier, reason }, 200)

  const request = await createPermissionRequest(c.var.services.reader, { agentId, userId, toolName, toolInput, reason })
  log.info('permissions.request_created', { requestId: request.id, toolName, owned: request.userId !== null })
  if (request.userId) {
    await notifyDashboards(c, request.userId, requestMessage(request))
    await scheduleExpiry(c.var.services, request.id)
  }
  return c.json({ allow: false, tier, reason, requestId: request.id }, 200)
}

/** The request's expiry job, due at its expiry. Best effort: without it, only the socket's `permission_expired` is missing. */
async function scheduleExpiry(services: AppEnv['Variables']['services'], requestId: string) {
  try {
    await services.queue.publish(PERMISSION_EXPIRY_PATH, { requestId }, { delaySec: PERMISSION_TTL_MS / 1000, deduplicationId: `permission-expiry-${requestId}`, retries: 3 })
  } catch (e) {
    log.warn('permissions.expiry_publish_failed', { requestId, ...errorFields(e) })
  }
}
