import type { RouteHandler } from '@hono/zod-openapi'
import { probeInstance } from '../../../lib/agents/instance'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { InstanceStatsSchema, UserIdParams } from '../schemas'
import { DEFAULT_RUNTIME_VERSION, ownInstance } from '../shared'

export const route = signedInRoute(
  limitedRoute(limits.instance, limitedRoute(limits.instancePerUser, {
    method: 'get',
    path: '/api/instance/{userId}/stats',
    operationId: 'getInstanceStats',
    tags: ['Instance'],
    summary: 'The caller’s instance stats (from the probe)',
    description: 'Resource, lifecycle and message metrics are not collected yet: `cpu` is `0%`, `memory` `0MB`, `messages` and `errors` null, every `telemetry` flag false.',
    request: { params: UserIdParams },
    responses: {
      200: ok(InstanceStatsSchema),
      403: errorResponse('`userId` is not the caller (`FORBIDDEN`)'),
      404: errorResponse('`No instance found. Please deploy first.` (`NOT_FOUND`)'),
    },
  })),
)

export const handler: RouteHandler<typeof route> = async (c) => {
  const { userId } = c.req.valid('param')
  const agent = await ownInstance(c, userId)
  const probe = await probeInstance(c.var.services, agent)
  const live = probe.status === 'running' || probe.status === 'healthy'
  return c.json(
    {
      userId,
      status: probe.status === 'healthy' ? ('running' as const) : probe.status,
      health: live ? 'healthy' : probe.status,
      cpu: '0%',
      memory: '0MB',
      uptime: probe.uptime ?? (live ? 'active' : 'unknown'),
      messages: null,
      errors: null,
      runtimeVersion: probe.runtimeVersion ?? DEFAULT_RUNTIME_VERSION,
      statusReason: live ? null : probe.statusReason,
      probeChecks: probe.probeChecks,
      telemetry: { resourceMetricsAvailable: false, lifecycleMetricsAvailable: false, messageMetricsAvailable: false },
    },
    200,
  )
}
