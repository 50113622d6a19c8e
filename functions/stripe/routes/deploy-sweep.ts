import { z } from '@hono/zod-openapi'
import { tallyField } from '../../../lib/http/fields'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { DEPLOY_SWEEP_AFTER_MS, DEPLOY_SWEEP_BATCH, DEPLOY_SWEEP_PATH, sweepPendingDeploys } from '../deploy-outbox'


export const route = queueReceiverRoute({
  path: DEPLOY_SWEEP_PATH,
  operationId: 'sweepSubscriptionDeploys',
  tags: ['Billing'],
  summary: 'Cron receiver: publish again subscription deploys the queue has not taken',
  description:
    'Signed queue deliveries only (`Upstash-Signature`); the cron (`subscription-deploy-sweep`) runs every 5 minutes. ' +
    'A plan checkout writes its runtime deploy to an outbox in the transaction that applies it, and publishes it once ' +
    'that commits; a deploy still there ' +
    `${DEPLOY_SWEEP_AFTER_MS / 60_000} minutes after its last try is one the queue did not take (refused, or a crash ` +
    'before it was published or marked): it is published again to `POST /api/queue/subscription-deploy` with its ' +
    'Checkout Session as the deduplication id, then removed from the outbox. A publish that fails is counted, recorded ' +
    `on the deploy and tried at the next run. At most ${DEPLOY_SWEEP_BATCH} deploys a run, oldest first. The backend's ` +
    'deploy is idempotent by subscription, so a deploy published twice deploys once.',
  request: { body: jsonBody(z.object({}).openapi('DeploySweepMessage', { description: 'Empty (`{}`) from the cron' })) },
  responses: {
    200: ok(
      z
        .object({
          ok: z.literal(true),
          found: tallyField('Deploys waiting past the bound (this run’s batch)'),
          published: tallyField('Deploys published again and removed from the outbox'),
          failed: tallyField('Publishes that failed (tried again next run)'),
        })
        .openapi('DeploySweepResult'),
    ),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const done = await sweepPendingDeploys(c.var.services)
  return c.json({ ok: true as const, ...done }, 200)
}
