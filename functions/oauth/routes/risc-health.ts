import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'

export const route = createRoute({
  method: 'get',
  path: '/api/security/risc',
  operationId: 'getRiscReceiverHealth',
  security: [],
  tags: ['Security'],
  summary: 'RISC receiver health',
  description: 'Always `{status: "ok"}`; touches no store.',
  responses: { 200: ok(z.object({ status: z.literal('ok') })) },
})

export const handler: RouteHandler<typeof route, AppEnv> = (c) => c.json({ status: 'ok' as const }, 200)
