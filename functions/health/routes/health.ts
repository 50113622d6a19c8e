import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv, RuntimeMetrics } from '../../../lib/context'
import { ErrorSchema } from '../../../lib/http/openapi'
import { errorFields, log } from '../../../lib/log'

const HealthSchema = z
  .object({
    status: z.enum(['ok', 'error']),
    health: z.enum(['healthy', 'degraded', 'unhealthy']),
    timestamp: z.string().max(64).openapi({ format: 'date-time' }),
  })
  .openapi('Health')

// The failure is an error like any other: it carries `{error, code}` next to the health fields.
const HealthFailureSchema = HealthSchema.extend(ErrorSchema.shape).openapi('HealthFailure')

export const route = createRoute({
  method: 'get',
  path: '/api/health',
  operationId: 'getHealth',
  security: [],
  tags: ['Health'],
  summary: 'Service health',
  description:
    'Healthy when CPU and memory are both at or below 70%, degraded above 70% up to 85%, unhealthy above 85%. ' +
    'Always 200 for those; 500 only when collecting metrics fails. On Workers (workerd) no CPU or memory ' +
    'figures exist, the platform enforces isolate limits, and the function reports healthy.',
  responses: {
    200: { description: 'Metrics collected', content: { 'application/json': { schema: HealthSchema } } },
    500: { description: 'Collecting metrics failed (`INTERNAL`)', content: { 'application/json': { schema: HealthFailureSchema } } },
  },
})

export function classifyHealth(m: Pick<RuntimeMetrics, 'cpuPercent' | 'memoryPercent'>) {
  const worst = Math.max(m.cpuPercent ?? 0, m.memoryPercent ?? 0)
  if (worst > 85) return 'unhealthy' as const
  if (worst > 70) return 'degraded' as const
  return 'healthy' as const
}

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const timestamp = new Date().toISOString()
  try {
    const metrics = await c.var.services.metrics()
    return c.json({ status: 'ok' as const, health: classifyHealth(metrics), timestamp }, 200)
  } catch (e) {
    log.error('health.metrics_failed', { requestId: c.var.requestId, ...errorFields(e) })
    return c.json({ status: 'error' as const, health: 'unhealthy' as const, timestamp, error: 'Collecting metrics failed', code: 'INTERNAL' as const }, 500)
  }
}
