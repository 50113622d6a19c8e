import { createPlatformApp, createRouter } from '../../lib/app'
import type { ServiceProvider } from '../../lib/context'
import { openApiDocument, serveDocument } from '../../lib/http/openapi-docs'
import { backendLifecycleRoute } from './routes/agent-lifecycle'
import * as aiUsage from './routes/ai-usage'
import * as deployments from './routes/deployments'
import * as health from './routes/health'
import * as heartbeat from './routes/heartbeat'
import * as install from './routes/install'
import * as installations from './routes/installations'
import * as link from './routes/link'
import * as registerHome from './routes/register-home'
import * as registerLink from './routes/register-link'
import * as registrationToken from './routes/registration-token'
import * as subscriptionsDeploy from './routes/subscriptions-deploy'
import * as validateKey from './routes/validate-key'

const agentStart = backendLifecycleRoute('start')
const agentStop = backendLifecycleRoute('stop')
const agentRestart = backendLifecycleRoute('restart')
const agentRepair = backendLifecycleRoute('repair')

const routes = createRouter()
// One chain, so the route types reach `BackendApp` (and the typed client) intact.
const api = routes
  .openapi(health.route, health.handler)
  .openapi(validateKey.route, validateKey.handler)
  .openapi(install.route, install.handler)
  .openapi(link.route, link.handler)
  .openapi(registerHome.route, registerHome.handler)
  .openapi(registerLink.route, registerLink.handler)
  .openapi(installations.route, installations.handler)
  .openapi(registrationToken.route, registrationToken.handler)
  .openapi(heartbeat.route, heartbeat.handler)
  .openapi(subscriptionsDeploy.route, subscriptionsDeploy.handler)
  .openapi(aiUsage.route, aiUsage.handler)
  .openapi(deployments.route, deployments.handler)
  .openapi(agentStart.route, agentStart.handler)
  .openapi(agentStop.route, agentStop.handler)
  .openapi(agentRestart.route, agentRestart.handler)
  .openapi(agentRepair.route, agentRepair.handler)

/** The backend API: its own listener locally, its own Worker deployed; documents itself at /openapi.json, docs page at /docs. */
const title = 'Platform backend API'
export const backendApiDocument = () => openApiDocument(api, title)
export const app = serveDocument(createRouter(), backendApiDocument, { title, docPath: '/openapi.json', pagePath: '/docs' }).route('/', api)

/** The backend API on the shared stack, as `npm start` and the tests serve it (its Worker: ./index.ts). */
export const createBackendApp = (provide: ServiceProvider) => createPlatformApp(provide).route('/', app)

/** The backend API's type, for `hc<BackendApp>` (lib/client.ts). */
export type BackendApp = ReturnType<typeof createBackendApp>
