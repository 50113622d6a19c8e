import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { queueReceiverRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { watchdogDeps, WATCHDOG_PATH } from '../../../lib/watchdog/deps'
import { runWatchdog } from '../watchdog/sweep'
import { WatchdogMessage, WatchdogResult } from '../schemas'

export const route = queueReceiverRoute({
  path: WATCHDOG_PATH,
  operationId: 'runWatchdog',
  tags: ['Agents'],
  summary: 'Cron and queue receiver: the agent watchdog',
  description:
    'Signed queue deliveries only (`Upstash-Signature`). The cron (every 2 minutes, body `{}`) starts a sweep: the ' +
    'running and starting agents due a check are published back to this path in batches (`{agentIds}`), with a ' +
    '`{cursor}` continuation past one page. A batch leases its agents, checks each runtime (`/api/status`; `/healthz` ' +
    'and `/readyz` too when it does not decide: the agent status table of spec 2) and applies the watchdog rules: healthy agents are checked again after `WATCHDOG_CHECK_INTERVAL`; ' +
    'unhealthy or unreachable ones are degraded and re-probed after `WATCHDOG_DEGRADED_CHECK_INTERVAL` (a delayed ' +
    'message); `WATCHDOG_STARTUP_FAILURE_THRESHOLD` consecutive failures ask the runtime provider for a repair, at ' +
    'most `WATCHDOG_MAX_REPAIR_ATTEMPTS` times; `WATCHDOG_CRASH_LOOP_THRESHOLD` crashes within ' +
    '`WATCHDOG_CRASH_LOOP_WINDOW` mark the agent `crash_loop`: no more repairs, its owner mailed once. Every ' +
    'transition is recorded with its reason. Each sweep first reconciles paid access: the agents of users whose paid ' +
    'access ended (the trial over, the subscription canceled) have their runtimes stopped through the provider and ' +
    'are marked `suspended` (nothing deleted), as are the newest beyond a plan’s agent count; `{userIds}` (published ' +
    'by a payment event) reconciles those users at once. Suspended agents are never repaired, nor is an agent whose ' +
    'owner has no paid access. The watchdog has no endpoint of its own for users.',
  request: { body: jsonBody(WatchdogMessage) },
  responses: {
    200: ok(WatchdogResult, 'The sweep was published, or the batch checked'),
    502: errorResponse('`Queue unavailable`: the queue did not take a message this delivery publishes (`QUEUE_UNAVAILABLE`); nothing is lost, the queue delivers this one again'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const done = await runWatchdog(watchdogDeps(c.var.services), c.req.valid('json'))
  return c.json({ ok: true as const, ...done }, 200)
}
