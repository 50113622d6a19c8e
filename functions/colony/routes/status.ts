import type { RouteHandler } from '@hono/zod-openapi'
import { askSoulHosts, type HostAttempt, soulHosts } from '../soul-host'
import { colonyTree, soulState } from '../tree'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { log } from '../../../lib/log'
import { ColonyDiagnosticsSchema, ColonyQuery, ColonyTreeSchema, SoulStateSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/colony/status',
  operationId: 'colonyStatus',
  tags: ['Colony'],
  summary: 'The colony’s tree, the root’s cognitive state, or the soul hosts’ diagnostics',
  description:
    'Read from the soul host: `SOUL_SERVICE_URL` (the primary) and `SOUL_SERVICE_FALLBACK_URLS`, all asked at once, each ' +
    'within `SOUL_SERVICE_TIMEOUT_MS` (5 s); the primary’s answer when it has one, else the first fallback to answer, ' +
    'marked `degraded: true` with `error` and `detail`. The soul host serves `GET /colony` (`{root, agents[]}`) and ' +
    '`GET /soul`; `diagnostics` asks every host for `GET /health`. `tree` applies the fitness rules here: `template` ' +
    'agents are left out, `avg_fitness` is the mean to one decimal (0 when empty), `cull_queue` holds the agents below ' +
    '40. When no host answers (or none is configured) the answer is still 200 and `degraded`: an empty colony whose ' +
    'root has the zero address and a `0.00 USDC.e` balance, or a cognitive state of nulls.',
  request: { query: ColonyQuery },
  responses: {
    200: {
      description: '`tree`, `soul` or `diagnostics`, by `action`',
      content: { 'application/json': { schema: ColonyTreeSchema.or(SoulStateSchema).or(ColonyDiagnosticsSchema) } },
    },
  },
})

const describe = (attempts: HostAttempt[]) => attempts.map((a) => `${a.host}: ${a.detail}`).join('; ') || 'SOUL_SERVICE_URL is not set'

export const handler: RouteHandler<typeof route> = async (c) => {
  const { action } = c.req.valid('query')
  const { config } = c.var.services

  if (action === 'diagnostics') {
    const hosts = soulHosts(config)
    const answers = await Promise.all(hosts.map((_, i) => askSoulHosts({ ...config, SOUL_SERVICE_URL: hosts[i], SOUL_SERVICE_FALLBACK_URLS: [] }, '/health')))
    return c.json(
      {
        configured: hosts.length > 0,
        hosts: answers.map((a, i) => ({ ...a.attempts[0], role: i === 0 ? ('primary' as const) : ('fallback' as const) })),
        timestamp: new Date().toISOString(),
      },
      200,
    )
  }

  const answer = await askSoulHosts(config, action === 'soul' ? '/soul' : '/colony')
  const degraded = !answer.ok
    ? { degraded: true as const, error: 'Soul host unavailable', detail: describe(answer.attempts) }
    : answer.fallback
      ? { degraded: true as const, error: 'Primary soul host unavailable; a fallback served', detail: describe(answer.attempts.filter((a) => !a.ok)) }
      : {}
  // Outcomes only, never the hosts (the answer's `detail` names their origins, as the spec has it; a log does not).
  if (!answer.ok || answer.fallback) {
    log.warn('colony.degraded', { dependency: 'soul_host', action, served: answer.ok ? 'fallback' : 'none', outcomes: answer.attempts.map((a) => a.detail) })
  }
  const data = answer.ok ? answer.data : {}
  return c.json(action === 'soul' ? { ...soulState(data), ...degraded } : { ...colonyTree(data), ...degraded }, 200)
}
