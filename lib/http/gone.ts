import { createRoute, type RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../context'
import { ApiError } from './errors'
import { errorResponse } from './openapi'

/**
 * A retired POST path: 410 `DEPRECATED` for everyone (no auth, body ignored), naming its successor in the message
 * and in `Link: <successor>; rel="successor-version"`. Generic in the path so the typed client sees the literal path.
 */
export function goneRoute<P extends string>(path: P, successor: string, opts: { operationId: string; tag: string }) {
  const message = `Gone: use POST ${successor}`
  const route = createRoute({
    method: 'post',
    path,
    operationId: opts.operationId,
    security: [],
    tags: [opts.tag],
    summary: `Removed: use POST ${successor}`,
    description: `Always 410 \`{error: '${message}', code: 'DEPRECATED'}\` with \`Link: <${successor}>; rel="successor-version"\`.`,
    deprecated: true,
    responses: { 410: errorResponse(`${message} (\`DEPRECATED\`)`) },
  })
  const handler: RouteHandler<typeof route, AppEnv> = () => {
    throw new ApiError('DEPRECATED', { message, headers: { Link: `<${successor}>; rel="successor-version"` } })
  }
  return { route, handler }
}
