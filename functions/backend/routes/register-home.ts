import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { jsonBody } from '../../../lib/http/validation'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { IDENTITY_OR_KEY_NOTE, identityOrKey, identityOrKeyDocs } from '../identity-or-key'
import { gatewayTokenField, REGISTER_RULES, registerInstallation, registerResponses, userIdField } from '../registration'

const RegisterHomeBody = z
  .object(
    {
      userId: userIdField,
      mode: z
        .enum(['home', 'cloud'], { error: 'mode must be home or cloud' })
        .default('home')
        .openapi({ description: 'Default `home`; `link` installations use `/api/register-link`' }),
      gatewayToken: gatewayTokenField,
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('RegisterHome')

export const route = createRoute(limitedRoute(limits.backend, {
  method: 'post',
  path: '/api/register-home',
  operationId: 'registerHomeInstallation',
  security: [],
  tags: ['Installations'],
  summary: 'Register a self-hosted (home) installation',
  description: `${REGISTER_RULES} ${IDENTITY_OR_KEY_NOTE}`,
  middleware: [identityOrKey],
  ...identityOrKeyDocs,
  request: { body: jsonBody(RegisterHomeBody) },
  responses: registerResponses,
}))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  return c.json(await registerInstallation(c, body), 200)
}
