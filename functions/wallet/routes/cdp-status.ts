import type { RouteHandler } from '@hono/zod-openapi'
import type { SignedInEnv } from '../../../lib/context'
import { limits } from '../../../lib/http/limits'
import { ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { CDP_SUPPORTED_CHAINS, cdpSettings } from '../cdp'
import { CdpStatusSchema } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'get',
    path: '/api/wallet/cdp',
    operationId: 'getCdpStatus',
    tags: ['Wallet'],
    summary: 'Whether managed (CDP) wallets are configured',
    description:
      '`status` `configured` when the CDP API key id and secret are set, else `not_configured`; the chains a managed ' +
      'wallet can use. Creating one also needs the CDP Wallet Secret, checked when a wallet is created (503 ' +
      '`NOT_CONFIGURED` without it).',
    responses: { 200: ok(CdpStatusSchema) },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = (c) => {
  const status = cdpSettings(c.var.services.config) ? ('configured' as const) : ('not_configured' as const)
  return c.json({ status, type: 'cdp' as const, supportedChains: [...CDP_SUPPORTED_CHAINS] }, 200)
}
