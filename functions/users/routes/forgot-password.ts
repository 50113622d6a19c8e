import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { emailField } from '../../../lib/http/fields'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { RESET_QUEUE_PATH, RESET_TTL_MINUTES } from '../reset-job'
import { OkSchema } from '../schemas'

const ForgotPasswordBody = z
  .object({
    email: emailField(),
  })
  .openapi('ForgotPasswordRequest')

export const route = createRoute(limitedRoute(limits.passwordReset, {
  method: 'post',
  path: '/api/auth/forgot-password',
  operationId: 'requestPasswordReset',
  security: [],
  tags: ['Users'],
  summary: 'Forgot password: mail a reset link',
  description:
    'Always 200 `{ok: true}` for a well-formed email, whether or not an account has it, and in the same time: ' +
    'the request only hands the email to the job queue and answers; the account lookup, the token and the mail ' +
    `happen afterwards (\`${RESET_QUEUE_PATH}\`). For an account, the mail carries ` +
    `\`{base_url}/reset-password?token=<64 hex>\`; the link works once, within ${RESET_TTL_MINUTES / 60} hour. ` +
    "Only the token's SHA-256 is stored. A malformed email is 400 `VALIDATION` (that tells nothing about " +
    'accounts). Wallet-derived addresses get no mail. Rate limited per IP: 5 per 15 minutes, shared with ' +
    'reset-password. When the job queue does not take the job (down, or no answer within `QSTASH_TIMEOUT_MS`), the ' +
    'answer is 502 `QUEUE_UNAVAILABLE` with `Retry-After`, never `{ok: true}`: nothing was stored and no mail will ' +
    'come, so ask again (it says nothing about accounts either).',
  request: { body: jsonBody(ForgotPasswordBody) },
  responses: {
    200: ok(OkSchema, 'Accepted; a link is mailed if the account exists'),
    400: errorResponse('Missing or invalid email (`VALIDATION`)'),
    502: errorResponse('`Queue unavailable` (`QUEUE_UNAVAILABLE`, `Retry-After`): the job was not queued, nothing will be mailed; ask again'),
  },
}))

// Nothing here depends on whether the account exists: one publish, then the answer.
export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const email = c.req.valid('json').email.toLowerCase()
  await c.var.services.queue.publish(RESET_QUEUE_PATH, { email })
  return c.json({ ok: true as const }, 200)
}
