import { createRouter } from '../../lib/app'
import * as adminHealth from './routes/admin-health'
import * as dashboardHealth from './routes/dashboard-health'
import * as health from './routes/health'
import * as version from './routes/version'

export const app = createRouter()
  .openapi(health.route, health.handler)
  .openapi(adminHealth.route, adminHealth.handler)
  .openapi(version.route, version.handler)
  .openapi(dashboardHealth.route, dashboardHealth.handler)
