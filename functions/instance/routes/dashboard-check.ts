import { createRoute, type RouteHandler } from '@hono/zod-openapi'
import { sql } from 'drizzle-orm'
import { agentGateway } from '../../../lib/agents/access'
import { findInstanceAgent } from '../../../lib/agents/instance'
import { readSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { withUser } from '../../../lib/db/rls'
import { ok } from '../../../lib/http/openapi'
import { errorFields, log } from '../../../lib/log'
import { DashboardCheckSchema } from '../schemas'

export const route = createRoute({
  method: 'get',
  path: '/api/debug/dashboard-check',
  operationId: 'dashboardCheck',
  tags: ['Diagnostics'],
  summary: 'What the dashboard needs, checked (always 200)',
  description:
    '`auth`: the session lookup ran (`ok` also for a caller without a session). `database`: one query under the app role. ' +
    '`gateway`: the signed-in caller’s instance gateway answered its sessions read (`unknown` without a session or an instance).',
  security: [],
  responses: { 200: ok(DashboardCheckSchema) },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { services } = c.var
  let auth: 'ok' | 'error' = 'ok'
  const user = await readSession(c).catch((e) => {
    auth = 'error'
    log.warn('dashboard_check.auth_failed', errorFields(e))
    return null
  })
  // `services.db` itself throws when no database is configured: inside the try, so that too is `error`.
  const database = await (async () => withUser(services.db, user?.id ?? 'anonymous', (tx) => tx.execute(sql`select 1`)))()
    .then(() => 'ok' as const)
    .catch((e) => (log.warn('dashboard_check.database_failed', errorFields(e)), 'error' as const))
  let gateway: 'ok' | 'error' | 'unknown' = 'unknown'
  if (user && database === 'ok') {
    const agent = await findInstanceAgent(services.db, user.id).catch(() => null)
    if (agent) {
      gateway = await agentGateway(services, agent)
        .then((g) => g.sessions())
        .then(() => 'ok' as const)
        .catch(() => 'error' as const)
    }
  }
  return c.json({ timestamp: new Date().toISOString(), status: 'ok' as const, checks: { database, gateway, auth } }, 200)
}
