import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { classifyHealth } from './health'

const AdminHealthSchema = z
  .object({
    status: z.literal('ok'),
    health: z.enum(['healthy', 'degraded', 'unhealthy']),
    cpu: z.number().nullable().openapi({ description: 'Percent; null on workerd' }),
    memory: z.number().nullable().openapi({ description: 'Percent; null on workerd' }),
    uptime: z.number().nullable().openapi({ description: 'Seconds; null on workerd' }),
    runtime: z.string().max(1024),
    adapters: z.object({ db: z.string().max(1024), kv: z.string().max(1024), queue: z.string().max(1024), storage: z.string().max(1024) }),
    timestamp: z.string().max(64),
  })
  .openapi('AdminHealth')

export const route = signedInRoute({
  method: 'get',
  path: '/api/admin/health',
  operationId: 'getAdminHealth',
  tags: ['Health'],
  summary: 'Health with CPU, memory and uptime (admin session)',
  responses: {
    200: ok(AdminHealthSchema),
    403: errorResponse('Not an admin (`ADMIN_REQUIRED`)'),
  },
}, 'admin')

export const handler: RouteHandler<typeof route> = async (c) => {
  const { metrics, adapters } = c.var.services
  const m = await metrics()
  return c.json(
    {
      status: 'ok' as const,
      health: classifyHealth(m),
      cpu: m.cpuPercent,
      memory: m.memoryPercent,
      uptime: m.uptimeSec,
      runtime: m.runtime,
      adapters,
      timestamp: new Date().toISOString(),
    },
    200,
  )
}
