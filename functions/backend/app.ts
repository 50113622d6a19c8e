import { createRouter } from '../../lib/app'
import { limits } from '../../lib/http/limits'
import { serveOpenApi } from '../../lib/http/openapi-docs'
import { rateLimit } from '../../lib/http/rate-limit'
import * as health from './routes/health'
import * as validateKey from './routes/validate-key'

const routes = createRouter()
routes.use('/api/*', rateLimit(limits.backend))
routes.use('/api/ai/*', rateLimit(limits.backendAi))
routes.openapi(health.route, health.handler)
routes.openapi(validateKey.route, validateKey.handler)

/** The backend API: its own listener locally, its own Worker deployed; documents itself at /openapi.json. */
export const app = serveOpenApi(createRouter(), routes, { title: 'Platform backend API', docPath: '/openapi.json' }).route('/', routes)
