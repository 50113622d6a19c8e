import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv, Services } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
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
    'process per agent on this machine, whose chat answers by echoing), `railway`, or `none` where no runtime provider ' +
    'is configured (a Worker without Railway). Always 200.',
  responses: {
    200: ok(
      z
        .object({
          status: z.literal('ok'),
          timestamp: z.string().max(64),
          docker: z.enum(['available', 'unavailable']),
          provisioning: z.enum(['enabled', 'disabled']),
          provider: z.string().max(1024),
          runtimes: z.enum(['local-processes', 'railway', 'none']),
        })
        .openapi('BackendHealth'),
    ),
  },
})

/** Where agents run; a provider that is not configured throws when it is first reached. */
function runtimesInUse(services: Services): 'local-processes' | 'railway' | 'none' {
  try {
    return services.runtimes.kind === 'local' ? 'local-processes' : 'railway'
  } catch (e) {
    if (e instanceof ApiError) return 'none'
    throw e
  }
}

export const handler: RouteHandler<typeof route, AppEnv> = (c) => {
  const { config } = c.var.services
  return c.json(
    {
      status: 'ok' as const,
      timestamp: new Date().toISOString(),
      docker: config.RUNTIME_PROVIDER_TOKEN ? ('available' as const) : ('unavailable' as const),
      provisioning: config.PROVISIONING_ENABLED && !config.PROVISIONING_KILL_SWITCH ? ('enabled' as const) : ('disabled' as const),
      provider: LEGACY_PROVIDER,
      runtimes: runtimesInUse(c.var.services),
    },
    200,
  )
}
