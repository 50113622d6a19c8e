import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'
import { ApiError } from '../http/errors'

/**
 * Guards a queue or cron receiver: the body must carry a valid `Upstash-Signature` for this URL (QStash in
 * production, the in-process queue locally: both sign the same way). 401 otherwise.
 */
export const requireQueueSignature = createMiddleware<AppEnv>(async (c, next) => {
  const signature = c.req.header('upstash-signature')
  if (!signature) throw new ApiError('SIGNATURE_REQUIRED', 'Missing queue signature')
  const body = await c.req.text()
  const url = c.var.services.config.PUBLIC_URL ? `${c.var.services.config.PUBLIC_URL}${new URL(c.req.url).pathname}` : c.req.url
  if (!(await c.var.services.queueVerifier.verify(signature, body, url))) throw new ApiError('INVALID_SIGNATURE', 'Invalid queue signature')
  await next()
})
