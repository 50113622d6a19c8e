import { z } from '@hono/zod-openapi'
import { tallyField } from '../../../lib/http/fields'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { HEARTBEAT_PATH, syncHeartbeats } from '../heartbeat-sync'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { ContinuationRun } from '../schemas'


const Message = z
  .object({ cursor: z.string().min(1).max(100).optional().openapi({ description: 'A continuation: the agents after this id' }), run: ContinuationRun })
  .openapi('HeartbeatSyncMessage', { description: 'Empty (`{}`) from the cron: start from the first agent' })

export const route = queueReceiverRoute({
  path: HEARTBEAT_PATH,
  operationId: 'syncHeartbeats',
  tags: ['Agents'],
  summary: "Cron and queue receiver: put each live agent's stored heartbeat setting on its gateway",
  description:
    'Signed queue deliveries only (`Upstash-Signature`); the cron runs every 15 minutes. The setting `PUT /api/heartbeat` ' +
    'stores is the owner\'s latest word: every running or starting agent whose gateway job differs from it (a setting ' +
    'stored while the gateway was unreachable, a runtime that lost its job) gets it. The gateway runs the heartbeat itself; ' +
    'nothing is sent twice. 200 agents per delivery, then a `{cursor}` continuation. An unreachable gateway is counted ' +
    'and tried again at the next run.',
  request: { body: jsonBody(Message) },
  responses: {
    200: ok(
      z
        .object({
          ok: z.literal(true),
          checked: tallyField('Agents looked at on this page'),
          updated: tallyField('Gateways given the stored setting'),
          unreachable: tallyField('Gateways that could not be read or written'),
          more: z.boolean().openapi({ description: 'A continuation was published for the next page' }),
        })
        .openapi('HeartbeatSyncResult'),
    ),
    502: errorResponse('`Queue unavailable`: the queue did not take the continuation (`QUEUE_UNAVAILABLE`); nothing is lost, the queue delivers this one again'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { cursor, run } = c.req.valid('json')
  const done = await syncHeartbeats(c.var.services, cursor, run)
  return c.json({ ok: true as const, ...done }, 200)
}
