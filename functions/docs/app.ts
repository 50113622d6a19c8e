import { createRouter } from '../../lib/app'
import { serveOpenApi } from '../../lib/http/openapi-docs'
import { webFamilies } from '../web'

const documented = createRouter()
for (const family of Object.values(webFamilies)) documented.route('/', family)

/** `/api/openapi.json` and `/api/docs` for the whole web API. */
export const app = serveOpenApi(createRouter(), documented, {
  title: 'Platform web API',
  docPath: '/api/openapi.json',
  pagePath: '/api/docs',
})
