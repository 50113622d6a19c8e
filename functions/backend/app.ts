import { createRouter } from '../../lib/app'
import { openApiDocument, serveDocument } from '../../lib/http/openapi-docs'
import * as health from './routes/health'
import * as heartbeat from './routes/heartbeat'
import * as install from './routes/install'
import * as installations from './routes/installations'
import * as link from './routes/link'
import * as registerHome from './routes/register-home'
import * as registerLink from './routes/register-link'
import * as registrationToken from './routes/registration-token'
import * as validateKey from './routes/validate-key'

const routes = createRouter()
routes.openapi(health.route, health.handler)
routes.openapi(validateKey.route, validateKey.handler)
routes.openapi(install.route, install.handler)
routes.openapi(link.route, link.handler)
routes.openapi(registerHome.route, registerHome.handler)
routes.openapi(registerLink.route, registerLink.handler)
routes.openapi(installations.route, installations.handler)
routes.openapi(registrationToken.route, registrationToken.handler)
routes.openapi(heartbeat.route, heartbeat.handler)

/** The backend API: its own listener locally, its own Worker deployed; documents itself at /openapi.json. */
const title = 'Platform backend API'
export const backendApiDocument = () => openApiDocument(routes, title)
export const app = serveDocument(createRouter(), backendApiDocument, { title, docPath: '/openapi.json' }).route('/', routes)
