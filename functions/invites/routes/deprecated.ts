import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { errorResponse } from '../../../lib/http/openapi'

/** A retired path: 410 for everyone (no auth, body ignored), naming its successor in the message and a `Link`. */
// Generic in the path so the typed client sees the literal path, not `string`.
function gone<P extends string>(path: P, successor: string, operationId: string) {
  const route = createRoute({
    method: 'post',
    path,
    operationId,
    security: [],
    tags: ['Invites'],
    summary: `Removed: use POST ${successor}`,
    description: `Always 410 \`{error: 'Gone: use POST ${successor}', code: 'DEPRECATED'}\` with \`Link: <${successor}>; rel="successor-version"\`.`,
    deprecated: true,
    responses: { 410: errorResponse(`Gone: use POST ${successor} (\`DEPRECATED\`)`) },
  })
  const handler: RouteHandler<typeof route, AppEnv> = (c) => {
    c.header('Link', `<${successor}>; rel="successor-version"`)
    return c.json({ error: `Gone: use POST ${successor}`, code: 'DEPRECATED' }, 410)
  }
  return { route, handler }
}

export const generate = gone('/api/invite/generate', '/api/invite', 'generateInviteRemoved')
export const validate = gone('/api/invite/validate', '/api/invites/verify', 'validateInviteRemoved')
