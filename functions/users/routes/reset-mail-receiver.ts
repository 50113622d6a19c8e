import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { RESET_QUEUE_PATH, sendResetMail } from '../reset-job'

export const route = queueReceiverRoute({
  path: RESET_QUEUE_PATH,
  operationId: 'deliverPasswordResetMail',
  tags: ['Users'],
  summary: 'Queue receiver: mail a password reset link',
  description:
    'Signed queue deliveries only (`Upstash-Signature`), published by `POST /api/auth/forgot-password`. For an ' +
    'account with this email (and a real mailbox), stores a new single-use token and mails the link; otherwise ' +
    'does nothing. 503 when the mail provider fails, so the queue retries (the unsent token is removed first).',
  request: { body: jsonBody(z.object({ email: z.string().min(1).max(254) })) },
  responses: {
    200: ok(z.object({ ok: z.literal(true) }), 'Done (mailed, or nothing to do)'),
    503: errorResponse('The mail provider failed (`MAIL_UNAVAILABLE`): retried by the queue'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await sendResetMail(c, c.req.valid('json').email.toLowerCase())
  return c.json({ ok: true as const }, 200)
}
