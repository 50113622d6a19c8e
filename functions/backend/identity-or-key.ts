import type { RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { API_KEY_PREFIX, findApiKey } from '../../lib/auth/api-keys'
import { IDENTITY_SCHEME_DESCRIPTION, IDENTITY_TIMESTAMP_HEADER, type Identity, verifyIdentity } from '../../lib/auth/identity'
import { bearerToken } from '../../lib/auth/shared-key'
import type { AppEnv } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'

/**
 * The caller of an installation route. The install scripts a user pipes to a shell hold only the
 * user's API key, never the web tier's HMAC secret, so `Authorization: Bearer sk_...` is accepted as
 * the key owner's identity (role `user`, their email, so an admin's key is an admin). Any other request
 * must carry signed identity headers. A key wins over headers sent alongside it. Sets `c.var.identity`
 * (and `c.var.apiKeyId` for a key); 401 `Invalid API key` for a key that does not resolve, else the
 * identity headers' 401s.
 */
export async function resolveCaller(c: Context<AppEnv>): Promise<Identity> {
  const token = bearerToken(c.req.header('authorization'))
  if (!token?.startsWith(API_KEY_PREFIX)) return verifyIdentity(c)
  const found = await findApiKey(c.var.services.reader, token)
  if (!found) throw new ApiError('INVALID_API_KEY')
  const identity: Identity = { userId: found.user.id, email: found.user.email, role: 'user' }
  c.set('identity', identity)
  c.set('apiKeyId', found.key.id)
  return identity
}

export const identityOrKey = createMiddleware<AppEnv>(async (c, next) => {
  await resolveCaller(c)
  await next()
})

/** OpenAPI for routes behind `identityOrKey`: the key is the `apiKey` scheme, the headers are parameters. */
export const identityOrKeyDocs: Pick<RouteConfig, 'security' | 'parameters'> = {
  security: [{ apiKey: [] }, { identityHeaders: [] }],
  parameters: [
    { name: 'x-user-id', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: 'Identity from the web tier (default `anonymous`); ignored when a `sk_` key is sent' },
    { name: 'x-user-email', in: 'header', required: false, schema: { type: 'string', maxLength: 254 } },
    { name: 'x-user-role', in: 'header', required: false, schema: { type: 'string', maxLength: 64 }, description: 'Default `user`' },
    { name: IDENTITY_TIMESTAMP_HEADER, in: 'header', required: false, schema: { type: 'string', pattern: '^[0-9]{1,12}$', maxLength: 12 }, description: 'Unix seconds when the headers were signed; within 5 minutes of the server clock' },
    { name: 'x-user-signature', in: 'header', required: false, schema: { type: 'string', maxLength: 256 }, description: IDENTITY_SCHEME_DESCRIPTION },
  ],
}

export const IDENTITY_OR_KEY_NOTE =
  'Caller: `Authorization: Bearer sk_...` (a user API key: the key owner, role `user`; used by the install ' +
  'scripts) or signed identity headers (`x-user-*` and `x-identity-timestamp`, from the web tier; see the ' +
  '`identityHeaders` security scheme). A key wins over headers sent with it.'
