import type { RouteHandler } from '@hono/zod-openapi'
import { SUBSCRIPTION_DEPLOY_PATH } from '../subscription'
import type { AppEnv } from '../../../lib/context'
import { deadline } from '../../../lib/deadline'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { errorFields, log } from '../../../lib/log'
import { DeployJobSchema, DeployResultSchema } from '../schemas'

export const route = queueReceiverRoute({
  path: SUBSCRIPTION_DEPLOY_PATH,
  operationId: 'deliverSubscriptionDeploy',
  tags: ['Billing'],
  summary: 'Queue receiver: deploy the runtime of a new subscription',
  description:
    'Signed queue deliveries only (`Upstash-Signature`), published by a completed plan checkout (the Stripe ' +
    'webhook or checkout verify, once per Checkout Session). Calls the backend\'s `POST /api/subscriptions/deploy` ' +
    '(`Authorization: Bearer INTERNAL_API_KEY`, body `{tier, stripeCustomerId, subscriptionId, userId}`; idempotent by ' +
    'subscription). The backend\'s 2xx is 200; its 5xx, 408, 429, a timeout (10 s) or no answer is 502 so the queue ' +
    'retries; its other 4xx is a permanent refusal: logged, and 200 `deployed: false` so it is not retried forever. 503 when ' +
    '`BACKEND_URL` or `INTERNAL_API_KEY` is unset (retried).',
  request: { body: jsonBody(DeployJobSchema) },
  responses: {
    200: ok(DeployResultSchema, 'Deployed, or refused for good by the backend'),
    502: errorResponse('The backend failed (5xx, 408, 429) or did not answer (`BACKEND_UNAVAILABLE`): retried by the queue'),
    503: errorResponse('Backend not configured (`NOT_CONFIGURED`): retried by the queue'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const job = c.req.valid('json')
  const { BACKEND_URL, INTERNAL_API_KEY } = c.var.services.config
  if (!BACKEND_URL || !INTERNAL_API_KEY) throw new ApiError('NOT_CONFIGURED', 'Backend not configured')
  const fields = { requestId: c.var.requestId, userId: job.userId, subscriptionId: job.subscriptionId, tier: job.tier }
  let res: Response
  const bound = deadline(10_000)
  try {
    res = await fetch(`${BACKEND_URL.replace(/\/+$/, '')}/api/subscriptions/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: job.tier, stripeCustomerId: job.stripeCustomerId, subscriptionId: job.subscriptionId ?? undefined, userId: job.userId }),
      signal: bound.signal,
    })
  } catch (e) {
    log.error('stripe.deploy_unreachable', { ...fields, ...errorFields(e) })
    throw new ApiError('BACKEND_UNAVAILABLE')
  } finally {
    bound.clear() // only the status counts: the body is not read
  }
  await res.body?.cancel()
  // 408 (request timeout) and 429 (rate limited) are transient, like 5xx: the queue retries.
  if (res.status >= 500 || res.status === 408 || res.status === 429) {
    log.error('stripe.deploy_failed', { ...fields, status: res.status })
    throw new ApiError('BACKEND_UNAVAILABLE')
  }
  if (!res.ok) {
    log.error('stripe.deploy_refused', { ...fields, status: res.status })
    return c.json({ ok: true as const, deployed: false }, 200)
  }
  log.info('stripe.deployed', fields)
  return c.json({ ok: true as const, deployed: true }, 200)
}
