import { z } from '@hono/zod-openapi'
import { MAX_LISTED_REQUESTS, MAX_STORED_TOOL_INPUT_CHARS } from './requests'

/** How deep `toolInput` may nest: tool arguments are shallow; this keeps every walk over it (and Postgres) cheap. */
export const MAX_TOOL_INPUT_DEPTH = 32

const iso = (description: string) => z.string().max(64).openapi({ format: 'date-time', description })

/** Nesting depth of a JSON value, walked iteratively (a hostile body cannot exhaust the stack). */
function depthOf(value: unknown): number {
  let max = 0
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length) {
    const [v, d] = stack.pop()!
    if (v && typeof v === 'object') {
      max = Math.max(max, d)
      if (max > MAX_TOOL_INPUT_DEPTH) return max
      for (const child of Object.values(v)) stack.push([child, d + 1])
    }
  }
  return max
}

/** Names as the hook sends them: an agent or user id, or `unknown`. */
const hookName = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, `${field} must not be empty`)
    .max(200, `${field} must be at most 200 characters`)
    .default('unknown')

export const ToolInputSchema = z
  .record(z.string(), z.unknown(), { error: 'toolInput must be an object' })
  .refine((o) => depthOf(o) <= MAX_TOOL_INPUT_DEPTH, `toolInput may nest at most ${MAX_TOOL_INPUT_DEPTH} levels`)
  .openapi({
    type: 'object',
    description:
      `The tool's arguments (\`{command}\` for shell tools, \`{path}\` or \`{file_path}\` for writes). Classified whole; a request ` +
      `keeps at most ${MAX_STORED_TOOL_INPUT_CHARS} characters of its JSON: past that it stores \`{truncated: true, size, preview}\`.`,
  })

export const ClassifyBody = z
  .object({
    toolName: z.string({ error: 'toolName required' }).min(1, 'toolName required').max(200, 'toolName must be at most 200 characters').openapi({ example: 'bash' }),
    toolInput: ToolInputSchema.default({}),
    agentId: hookName('agentId').openapi({ description: 'The calling agent (default `unknown`)' }),
    userId: hookName('userId').openapi({ description: 'The user the agent acts for (default `unknown`)' }),
  })
  .openapi('ToolCall', { description: 'A tool call an agent is about to make' })

export const ClassifyResult = z
  .object({
    allow: z.boolean().openapi({ description: 'Only `safe` calls are allowed outright' }),
    tier: z.enum(['safe', 'dangerous', 'destructive']),
    reason: z.string().max(1000),
    requestId: z.string().max(100).optional().openapi({ description: 'Only for `dangerous`: the permission request to poll' }),
  })
  .openapi('ToolCallClassification')

export const PermissionStatusSchema = z.enum(['pending', 'approved', 'denied'])

export const PollResult = z
  .object({
    requestId: z.string().max(100),
    status: PermissionStatusSchema.openapi({ description: '`approved` alone allows the call; `denied` also when the request expired' }),
    decidedAt: iso('When the owner decided, or when the request expired; null while pending').nullable(),
    expired: z.boolean().openapi({ description: 'Nobody decided within 10 minutes of its creation: `status` is `denied`' }),
    expiresAt: iso('When the request expires (or expired) unless decided before: 10 minutes after its creation'),
  })
  .openapi('PermissionRequestState')

export const PermissionRequestSchema = z
  .object({
    requestId: z.string().max(100),
    agentId: z.string().max(200),
    toolName: z.string().max(200),
    toolInput: z.record(z.string(), z.unknown()).openapi({ type: 'object', description: 'As stored (see `ToolCall.toolInput`)' }),
    reason: z.string().max(1000).openapi({ description: "The classifier's reason" }),
    status: PermissionStatusSchema,
    createdAt: iso('When the hook asked'),
    expiresAt: iso('10 minutes after `createdAt`: undecided by then, the request expires (a denial) and leaves the list'),
    decidedAt: iso('When the owner decided; null while pending').nullable(),
  })
  .openapi('PermissionRequest', { description: 'A dangerous tool call waiting for (or given) its owner’s decision' })

export const PermissionList = z
  .object({ requests: z.array(PermissionRequestSchema).max(MAX_LISTED_REQUESTS) })
  .openapi('PermissionRequestList')

export const DecisionBody = z
  .object({ decision: z.enum(['approve', 'deny'], { error: 'decision must be approve or deny' }) })
  .openapi('PermissionDecision')

export const RequestIdParams = z.object({
  requestId: z.string().min(1).max(100).openapi({ param: { name: 'requestId', in: 'path' }, description: 'The permission request id' }),
})

export const PermissionExpiryBody = z
  .object({ requestId: z.string().min(1).max(100) })
  .openapi('PermissionExpiry', { description: 'What `POST /api/hooks/classify` publishes for a dangerous call of a known owner' })

export const PermissionExpiryResult = z
  .object({
    ok: z.literal(true),
    requestId: z.string().max(100),
    expired: z.boolean().openapi({ description: 'Whether this delivery expired the request (and told the owner’s dashboards); false: decided, already expired, gone, or not yet due' }),
  })
  .openapi('PermissionExpiryResult')
