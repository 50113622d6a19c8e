import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { watchdogDeps } from '../../../lib/watchdog/deps'
import { HEALTH_WAIT_PATH, HEALTH_WAIT_POLL_SEC, HEALTH_WAIT_TIMEOUT_MS } from '../../../lib/watchdog/health-wait'
import { healthWait } from '../health-wait'
import { HealthWaitMessage, HealthWaitResult } from '../schemas'

export const route = queueReceiverRoute({
  path: HEALTH_WAIT_PATH,
  operationId: 'runHealthWait',
  tags: ['Agents'],
  summary: 'Queue receiver: probe a starting agent until it runs',
  description:
    'Signed queue deliveries only (`Upstash-Signature`). Published when a provisioning or a lifecycle action (start, ' +
    'restart, update, repair, factory reset) leaves an agent `starting`, with no delay: the runtime is probed ' +
    `(\`/healthz\`, \`/readyz\`, \`/api/status\`) and, once it answers (\`running\`, \`healthy\` or \`setup\`), the agent is ` +
    `recorded \`running\` with the transition. Until then the message is published again ${HEALTH_WAIT_POLL_SEC} s later, ` +
    `for at most ${HEALTH_WAIT_TIMEOUT_MS / 1000} s in all (the spec's health wait); after that the watchdog's checks take ` +
    'over. A wait whose agent was deleted, stopped or started again since is `stale` and does nothing.',
  request: { body: jsonBody(HealthWaitMessage) },
  responses: {
    200: ok(HealthWaitResult, 'The probe was made (or the wait is over)'),
    502: errorResponse('`Queue unavailable`: the queue did not take a message this delivery publishes (`QUEUE_UNAVAILABLE`); nothing is lost, the queue delivers this one again'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const outcome = await healthWait(watchdogDeps(c.var.services), c.req.valid('json'))
  return c.json({ ok: true as const, outcome }, 200)
}
