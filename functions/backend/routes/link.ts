import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { INSTALL_LINK_SH } from '../scripts.generated'
import { scriptResponses, serveScript } from './install'

export const route = createRoute({
  method: 'get',
  path: '/link',
  operationId: 'getLinkInstallScript',
  security: [],
  tags: ['Installations'],
  summary: 'Setup script, link mode',
  description:
    'A bash script: `curl -fsSL <backend>/link | bash`. Attaches an existing runtime (`RUNTIME_URL`, else asked): ' +
    'reads the API key (`PLATFORM_API_KEY`, else asked on the terminal) and the runtime\'s gateway token ' +
    '(`RUNTIME_GATEWAY_TOKEN`, else asked), then registers through `/api/register-link`. The backend URL is ' +
    'filled in as for `/install`.',
  responses: scriptResponses('The link-mode setup script'),
})

export const handler: RouteHandler<typeof route, AppEnv> = (c) => serveScript(c, INSTALL_LINK_SH)
