import { planRecord } from '../../../lib/auth/plan'
import type { RouteHandler } from '@hono/zod-openapi'
import { and, desc, eq, sql } from 'drizzle-orm'
import { agentGateway, openGatewayToken } from '../../../lib/agents/access'
import { findInstanceAgent } from '../../../lib/agents/instance'
import { withUser } from '../../../lib/db/rls'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import type { Services } from '../../../lib/context'
import { agents, type Agent } from '../../../schema'
import { SupportDiagnosticsSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/support/diagnostics',
  operationId: 'supportDiagnostics',
  tags: ['Diagnostics'],
  summary: 'A support snapshot of the caller’s account and instance',
  description:
    '`serviceHealth`: the database, the key-value store, the runtime provider (its adapter as `detail`) and the caller’s ' +
    'instance gateway (`down` when it does not answer; `detail` `no instance` without one). `recentErrors`: up to 5 of the ' +
    'caller’s agents in status `error`, newest first.',
  responses: { 200: ok(SupportDiagnosticsSchema), 500: errorResponse('Unexpected failure (`INTERNAL`)') },
})

type Health = { name: string; status: 'ok' | 'degraded' | 'down'; detail: string | null }
const check = (name: string, run: () => Promise<unknown>, detail: string | null = null): Promise<Health> =>
  run().then(
    () => ({ name, status: 'ok' as const, detail }),
    () => ({ name, status: 'down' as const, detail: 'unreachable' }),
  )

export const handler: RouteHandler<typeof route> = async (c) => {
  const { services } = c.var
  const me = c.var.user.id
  const [record, agent, errored] = await Promise.all([
    planRecord(c.var.services.db, c.var.user.id),
    findInstanceAgent(services.db, me),
    withUser(services.db, me, (tx) =>
      tx
        .select({ id: agents.id, name: agents.name, updatedAt: agents.updatedAt })
        .from(agents)
        .where(and(eq(agents.userId, me), eq(agents.status, 'error')))
        .orderBy(desc(agents.updatedAt))
        .limit(5),
    ),
  ])
  const serviceHealth = await Promise.all([
    check('database', () => withUser(services.db, me, (tx) => tx.execute(sql`select 1`)), services.adapters.db),
    check('kv', () => services.kv.get(`diagnostics:${me}`), services.adapters.kv),
    Promise.resolve<Health>({ name: 'runtime-provider', status: 'ok', detail: services.adapters.runtimes }),
    agent
      ? check('gateway', async () => (await agentGateway(services, agent)).sessions())
      : Promise.resolve<Health>({ name: 'gateway', status: 'down', detail: 'no instance' }),
  ])
  return c.json(
    {
      serviceHealth,
      trialCount: record.trialEndsAt && record.trialEndsAt.getTime() > Date.now() ? 1 : 0,
      tokenStatus: (await tokenOpens(services, agent)) ? ('present' as const) : ('missing' as const),
      recentErrors: errored.map((a) => ({ id: a.id, name: a.name, updatedAt: a.updatedAt.toISOString(), status: 'error' as const })),
      gatewayUrl: agent?.runtimeUrl ?? null,
      timestamp: new Date().toISOString(),
    },
    200,
  )
}

/** `present` only for a token that opens: one sealed under a key this server no longer has is as good as none. */
async function tokenOpens(services: Pick<Services, 'config'>, agent: Agent | null | undefined) {
  if (!agent) return false
  return (await openGatewayToken(services.config, agent).catch(() => null)) !== null
}
