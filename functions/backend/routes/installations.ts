import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { desc, eq, sql } from 'drizzle-orm'
import type { AppEnv } from '../../../lib/context'
import { withUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { installations } from '../../../schema'
import { IDENTITY_OR_KEY_NOTE, identityOrKey, identityOrKeyDocs } from '../identity-or-key'
import { INSTALLATION_MODES } from '../registration'
import { countField } from '../../../lib/http/fields'

/** A registration unseen for longer than this reads as `inactive`. */
export const INACTIVE_AFTER_MINUTES = 10

const InstallationSchema = z
  .object({
    user_id: z.string().max(255),
    mode: z.enum(INSTALLATION_MODES),
    registered_at: z.string().max(64).openapi({ format: 'date-time' }),
    last_seen: z.string().max(64).openapi({ format: 'date-time' }),
    status: z.enum(['active', 'inactive']).openapi({ description: `\`inactive\` when unseen for more than ${INACTIVE_AFTER_MINUTES} minutes` }),
  })
  .openapi('Installation')

export const route = createRoute(limitedRoute(limits.backend, {
  method: 'get',
  path: '/api/installations',
  operationId: 'listInstallations',
  security: [],
  tags: ['Installations'],
  summary: "The caller's installations",
  description: `Only the caller's own, most recently seen first; the gateway token is never listed. ${IDENTITY_OR_KEY_NOTE}`,
  middleware: [identityOrKey],
  ...identityOrKeyDocs,
  responses: {
    200: ok(z.object({ success: z.literal(true), count: countField(), installations: z.array(InstallationSchema) }).openapi('Installations')),
    401: errorResponse('`Invalid API key`, or identity headers unsigned (`SIGNATURE_REQUIRED`) or badly signed (`INVALID_SIGNATURE`)'),
  },
}))

// Derived at read time against the database clock, the same clock that stamps `last_seen`.
const derivedStatus = sql<'active' | 'inactive'>`case when ${installations.status} = 'active'
  and ${installations.lastSeen} > now() - make_interval(mins => ${INACTIVE_AFTER_MINUTES}) then 'active' else 'inactive' end`

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const me = c.var.identity!.userId
  const rows = await withUser(c.var.services.db, me, (tx) =>
    tx
      .select({
        userId: installations.userId,
        mode: installations.mode,
        registeredAt: installations.registeredAt,
        lastSeen: installations.lastSeen,
        status: derivedStatus,
      })
      .from(installations)
      .where(eq(installations.userId, me))
      .orderBy(desc(installations.lastSeen), installations.mode),
  )
  const list = rows.map((r) => ({
    user_id: r.userId,
    mode: r.mode as (typeof INSTALLATION_MODES)[number],
    registered_at: r.registeredAt.toISOString(),
    last_seen: r.lastSeen.toISOString(),
    status: r.status,
  }))
  return c.json({ success: true as const, count: list.length, installations: list }, 200)
}
