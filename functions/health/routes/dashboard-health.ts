import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'
import { parseProbeTargets, probeService } from '../../../lib/probe/service-probe'

const DashboardHealthSchema = z
  .object({
    services: z.array(
      z.object({
        name: z.string().max(256),
        status: z.enum(['ok', 'degraded', 'down']),
        detail: z.string().max(1024).openapi({
          description:
            'ok: the `active`, `ready`, `status` or `build` field of the body (else `ok`); degraded: the HTTP status; ' +
            'down: `timeout (8s)`, `dns error`, `connection refused`, `connection reset`, `socket error` or `unreachable`',
        }),
      }),
    ),
    timestamp: z.string().max(64),
  })
  .openapi('DashboardHealth')

export const route = createRoute({
  method: 'get',
  path: '/api/dashboard/health',
  operationId: 'getDashboardHealth',
  security: [],
  tags: ['Health'],
  summary: 'Probe every configured service',
  description:
    'Services come from `HEALTH_PROBE_URLS` (`name=url|fallback,...`); unset, the backend `/health` is probed. ' +
    'Probes run in parallel: 6 s per candidate URL, then one retry on the primary URL with 8 s.',
  responses: { 200: ok(DashboardHealthSchema) },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { config } = c.var.services
  const targets = parseProbeTargets(config.HEALTH_PROBE_URLS, config.BACKEND_URL ?? 'http://127.0.0.1:8788')
  const services = await Promise.all(targets.map((t) => probeService(t)))
  c.header('Cache-Control', 'max-age=30, stale-while-revalidate=60')
  return c.json({ services, timestamp: new Date().toISOString() }, 200)
}
