import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'

/** Kept for clients of the old single-provider backend, which read this field. */
export const LEGACY_PROVIDER = 'docker'

export const route = createRoute({
  method: 'get',
  path: '/health',
  operationId: 'getBackendHealth',
  security: [],
  tags: ['Health'],
  summary: 'Backend health',
  description:
    '`docker` is `available` when a runtime provider is configured (`RUNTIME_PROVIDER_TOKEN`); `provisioning` is ' +
    '`enabled` when `PROVISIONING_ENABLED` is set and `PROVISIONING_KILL_SWITCH` is not. `provider` is the spec\'s fixed ' +
    'legacy string; `runtimes` says where agents run, as the local server\'s start names it: `local-processes` (a ' +
    'process per agent on this machine, whose chat answers by echoing) or `railway`. Always 200.',
  responses: {
    200: ok(
      z
        .object({
          status: z.literal('ok'),
          timestamp: z.string().max(64),
          docker: z.enum(['available', 'unavailable']),
          provisioning: z.enum(['enabled', 'disabled']),
          provider: z.string().max(1024),
          runtimes: z.enum(['local-processes', 'railway']),
        })
        .openapi('BackendHealth'),
    ),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = (c) => {
  const { config } = c.var.services
  return c.json(
    {
      status: 'ok' as const,
      timestamp: new Date().toISOString(),
      docker: config.RUNTIME_PROVIDER_TOKEN ? ('available' as const) : ('unavailable' as const),
      provisioning: config.PROVISIONING_ENABLED && !config.PROVISIONING_KILL_SWITCH ? ('enabled' as const) : ('disabled' as const),
      provider: LEGACY_PROVIDER,
      runtimes: c.var.services.runtimes.kind === 'local' ? ('local-processes' as const) : ('railway' as const),
    },
    200,
  )
}
