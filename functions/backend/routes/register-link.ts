import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { jsonBody } from '../../../lib/http/validation'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { IDENTITY_OR_KEY_NOTE, identityOrKey, identityOrKeyDocs } from '../identity-or-key'
import { gatewayTokenField, REGISTER_RULES, registerInstallation, registerResponses, userIdField } from '../registration'

// No `mode`: a link installation is always `link` (a `mode` sent anyway is ignored).
const RegisterLinkBody = z
  .object({ userId: userIdField, gatewayToken: gatewayTokenField }, { error: 'Request body must be a JSON object' })
  .openapi('RegisterLink')

export const route = createRoute(limitedRoute(limits.backend, {
  method: 'post',
  path: '/api/register-link',
  operationId: 'registerLinkInstallation',
  security: [],
  tags: ['Installations'],
  summary: 'Register a link installation (an existing runtime attached to the account)',
  description: `${REGISTER_RULES} ${IDENTITY_OR_KEY_NOTE}`,
  middleware: [identityOrKey],
  ...identityOrKeyDocs,
  request: { body: jsonBody(RegisterLinkBody) },
  responses: registerResponses,
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { userId, gatewayToken } = c.req.valid('json')
  return c.json(await registerInstallation(c, { userId, mode: 'link', gatewayToken }), 200)
}
