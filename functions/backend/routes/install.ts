import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../../../lib/context'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse } from '../../../lib/http/openapi'
import { INSTALL_HOME_SH } from '../scripts.generated'

export const BACKEND_URL_PLACEHOLDER = '__BACKEND_URL__'

/**
 * The URL is pasted into a script that runs in the user's shell, and a Host header may hold `$`, `(` or
 * a backtick, so only plain URL characters pass. `BACKEND_URL` is configured; the request's origin is
 * what the client asked for (a proxy or cache could be fed a hostile Host).
 */
const SAFE_URL = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/[A-Za-z0-9._~/-]*)?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/

export function backendUrl(c: Context<AppEnv>) {
  const configured = c.var.services.config.BACKEND_URL?.replace(/\/+$/, '')
  if (configured) {
    if (!SAFE_URL.test(configured)) throw new ApiError('MISCONFIGURED')
    return configured
  }
  const origin = new URL(c.req.url).origin
  if (!SAFE_URL.test(origin)) throw new ApiError('INVALID_HOST')
  return origin
}

/** A script as `text/plain`, with the backend URL filled in. */
export const serveScript = (c: Context<AppEnv>, script: string) =>
  c.text(script.replaceAll(BACKEND_URL_PLACEHOLDER, backendUrl(c)), 200, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-cache',
  })

export const scriptResponses = (what: string) => ({
  200: { description: what, content: { 'text/plain': { schema: z.string().max(1_048_576) } } },
  400: errorResponse('`Invalid Host`: the request\'s origin is not a plain URL (it would be pasted into a shell script)'),
  500: errorResponse('`Server misconfigured`: `BACKEND_URL` is not a plain URL'),
})

export const route = createRoute({
  method: 'get',
  path: '/install',
  operationId: 'getHomeInstallScript',
  security: [],
  tags: ['Installations'],
  summary: 'Setup script, home mode',
  description:
    'A bash script: `curl -fsSL <backend>/install | bash`. Checks curl and a running Docker, reads the API key ' +
    '(`PLATFORM_API_KEY`, else asked on the terminal), learns the user from `/api/validate-key`, generates a ' +
    'gateway token and registers through `/api/register-home` with the key as bearer token. The backend URL in ' +
    'it is `BACKEND_URL` when configured, else the origin the script was fetched from.',
  responses: scriptResponses('The home-mode setup script'),
})

export const handler: RouteHandler<typeof route, AppEnv> = (c) => serveScript(c, INSTALL_HOME_SH)
