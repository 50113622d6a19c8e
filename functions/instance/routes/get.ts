import { createRoute, type RouteHandler } from '@hono/zod-openapi'
import { findInstanceAgent, INSTANCE_PROBE_TTL_MS, noInstance, probeInstance } from '../../../lib/agents/instance'
import { planRecord } from '../../../lib/auth/plan'
import type { SignedInEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { InstanceSchema, UserIdParams } from '../schemas'
import { DEFAULT_RUNTIME_VERSION, instanceUrl, iso, sessionOr403 } from '../shared'

export const route = createRoute(
  limitedRoute(
    limits.instance,
    limitedRoute(limits.instancePerUser, {
      method: 'get',
      path: '/api/instance/{userId}',
      operationId: 'getInstance',
      tags: ['Instance'],
      summary: 'The caller’s instance and its probed runtime state',
      description:
        'The instance id is the user id. The instance is the caller’s most recent agent that is not a `template` ' +
        '(home and link installations have no URL on record, so they are not probed here). Its runtime is probed ' +
        '(`/healthz`, `/readyz`, `/api/status` in parallel, `/api/status` authoritative); an answer other than ' +
        `\`unreachable\` is reused for ${INSTANCE_PROBE_TTL_MS / 1000} s. A runtime stopped by its owner that answers nothing reads \`stopped\`.`,
      middleware: [sessionOr403],
      security: [{ session: [] }],
      request: { params: UserIdParams },
      responses: {
        200: ok(InstanceSchema),
        403: errorResponse('No session (`FORBIDDEN`)'),
        404: errorResponse('`No instance found. Please deploy first.`: no agent yet, or `userId` is not the caller (`NOT_FOUND`)'),
      },
    }, 'handler'),
    'handler',
  ),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  const { userId } = c.req.valid('param')
  const me = c.var.user
  await enforceRateLimit(c, limits.instance)
  await enforceRateLimit(c, limits.instancePerUser)
  if (userId !== me.id) throw noInstance()
  const { services } = c.var
  const agent = await findInstanceAgent(services.db, me.id)
  if (!agent) throw noInstance()
  const [probe, user] = await Promise.all([probeInstance(services, agent), planRecord(services.db, me.id)])
  const url = instanceUrl(agent)
  const live = probe.status === 'running' || probe.status === 'healthy'
  return c.json(
    {
      userId,
      status: probe.status,
      statusReason: live ? null : probe.statusReason,
      probeChecks: probe.probeChecks,
      startedAt: probe.startedAt ?? iso(agent.startedAt),
      subdomain: new URL(url).hostname,
      url,
      plan: agent.plan ?? user.plan ?? 'free',
      runtimeVersion: probe.runtimeVersion ?? DEFAULT_RUNTIME_VERSION,
      ffmpegAvailable: probe.ffmpegAvailable,
      ffmpegVersion: probe.ffmpegVersion,
      provisionedAt: iso(agent.provisionedAt),
      lastSeenAt: probe.probeChecks.some((p) => p.ok) ? probe.probedAt : iso(agent.lastSeenAt),
      gatewayProcessStatus: live ? 'active' : probe.status === 'stopped' ? 'inactive' : null,
      subscriptionStatus: user.subscriptionStatus ?? null,
    },
    200,
  )
}
