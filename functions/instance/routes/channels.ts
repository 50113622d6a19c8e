import type { RouteHandler } from '@hono/zod-openapi'
import { agentGateway } from '../../../lib/agents/access'
import { findInstanceAgent } from '../../../lib/agents/instance'
import { errorFields, log } from '../../../lib/log'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import type { GatewaySession } from '../../../lib/runtime/provider'
import { CHANNEL_PROVIDERS, ChannelsSchema } from '../schemas'

const NAMES = { webchat: 'Web chat', telegram: 'Telegram', discord: 'Discord', whatsapp: 'WhatsApp' } as const

export const route = signedInRoute({
  method: 'get',
  path: '/api/channels',
  operationId: 'listChannels',
  tags: ['Channels'],
  summary: 'Messaging channels of the caller’s instance, from its gateway’s sessions',
  description:
    'The gateway health check is the sessions read itself: `healthy` when the caller’s instance gateway answered it, else ' +
    '`unreachable` (also without an instance). A channel is `connected` when sessions exist for it (webchat: when the gateway ' +
    'is healthy), `not-configured` without sessions; webchat is `unreachable` when the health check fails. `lastActive` is the ' +
    'newest session’s, `messages` the sum over its sessions.',
  responses: { 200: ok(ChannelsSchema) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const agent = await findInstanceAgent(c.var.services.db, c.var.user.id)
  let sessions: GatewaySession[] | null = null
  if (agent) {
    try {
      sessions = await (await agentGateway(c.var.services, agent)).sessions()
    } catch (e) {
      log.warn('channels.gateway_failed', { agentId: agent.id, ...errorFields(e) })
    }
  }
  const healthy = sessions !== null
  const channels = CHANNEL_PROVIDERS.map((provider) => {
    const mine = (sessions ?? []).filter((s) => s.channel === provider)
    const lastActive = mine.map((s) => s.lastActive).filter((x): x is string => typeof x === 'string').sort().at(-1) ?? null
    const status =
      provider === 'webchat' ? (healthy ? ('connected' as const) : ('unreachable' as const)) : mine.length ? ('connected' as const) : ('not-configured' as const)
    return { name: NAMES[provider], provider, status, lastActive, messages: mine.reduce((n, s) => n + (Number.isFinite(s.messages) ? s.messages : 0), 0) }
  })
  return c.json({ channels, gatewayHealth: healthy ? ('healthy' as const) : ('unreachable' as const), source: 'gateway' as const }, 200)
}
