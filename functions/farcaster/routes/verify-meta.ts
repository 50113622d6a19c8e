import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { ok } from '../../../lib/http/openapi'
import { farcasterDomain, farcasterIssuer } from '../id-token'
import { TokenGatingMetaSchema } from '../schemas'
import { tokenGatingMeta } from '../token-gate'

export const route = createRoute({
  method: 'get',
  path: '/api/auth/farcaster/verify',
  operationId: 'getFarcasterSignInInfo',
  security: [],
  tags: ['Farcaster'],
  summary: 'What Farcaster sign-in expects',
  description:
    'The issuer whose Quick Auth ID tokens are accepted, the domain they must name as `aud`, and the token ' +
    'gate `POST` applies when it is given an `address`. Needs no store or secret.',
  responses: {
    200: ok(
      z.object({ issuer: z.string().max(1024), domain: z.string().max(1024), tokenGating: TokenGatingMetaSchema }).openapi('FarcasterVerifyMeta'),
    ),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = (c) => {
  const { config } = c.var.services
  return c.json({ issuer: farcasterIssuer(config), domain: farcasterDomain(config), tokenGating: tokenGatingMeta(config) }, 200)
}
