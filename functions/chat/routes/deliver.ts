import type { RouteHandler } from '@hono/zod-openapi'
import { deliverChatJob } from '../delivery'
import { CHAT_QUEUE_PATH } from '../jobs'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { ChatDeliveryResultSchema, ChatDeliverySchema } from '../schemas'

export const route = queueReceiverRoute({
  path: CHAT_QUEUE_PATH,
  operationId: 'deliverChatJob',
  tags: ['Gateway'],
  summary: 'Queue receiver: deliver a chat job to its agent’s runtime',
  description:
    'Signed queue deliveries only (`Upstash-Signature`), published by `POST /api/gateway/chat` (deduplicated by job id, ' +
    '3 retries). A job that is gone, finished or claimed by an agent is left as it is: 200 `delivered: false` (a ' +
    'redelivery changes nothing). Otherwise the job is `running` with one more attempt and its text goes to the ' +
    'agent’s runtime gateway (`POST /api/gateway/chat` on the runtime, 60 s timeout) with the job id as `deliveryId`, ' +
    'which the runtime dedupes on; the reply is stored as `result`, the job `succeeded`, its workload slots given back. ' +
    'A failed delivery before the last (`Upstash-Retried` below 3) puts the job back to `queued` with the `error` and ' +
    'answers 502 so the queue retries; the last one, or an agent without a runtime gateway, marks it `failed` (200).',
  request: { body: jsonBody(ChatDeliverySchema) },
  responses: {
    200: ok(ChatDeliveryResultSchema, 'Delivered, failed for good, or nothing to do'),
    502: errorResponse('`Runtime unavailable`: the runtime did not answer or failed; retried by the queue (`RUNTIME_UNAVAILABLE`)'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const retried = Number(c.req.header('upstash-retried') ?? 0)
  const outcome = await deliverChatJob(c.var.services, c.req.valid('json').jobId, Number.isInteger(retried) && retried >= 0 ? retried : 0)
  return c.json({ ok: true as const, ...outcome }, 200)
}
