import { createRouter } from '../../lib/app'
import { actionHook } from '../../lib/http/validation'
import * as channels from './routes/channels'
import * as dashboardCheck from './routes/dashboard-check'
import * as debug from './routes/debug'
import * as factoryReset from './routes/factory-reset'
import * as get from './routes/get'
import * as heartbeatDelete from './routes/heartbeat-delete'
import * as heartbeatGet from './routes/heartbeat-get'
import * as heartbeatPost from './routes/heartbeat-post'
import * as heartbeatPut from './routes/heartbeat-put'
import * as maintenance from './routes/maintenance'
import * as restart from './routes/restart'
import * as start from './routes/start'
import * as stats from './routes/stats'
import * as stop from './routes/stop'
import * as supportDiagnostics from './routes/support-diagnostics'

/** Instance state and lifecycle, runtime maintenance, heartbeat, channels and diagnostics (spec 2). */
export const app = createRouter()
  .openapi(get.route, get.handler)
  .openapi(stats.route, stats.handler)
  .openapi(start.route, start.handler)
  .openapi(stop.route, stop.handler)
  .openapi(restart.route, restart.handler)
  .openapi(factoryReset.route, factoryReset.handler)
  .openapi(maintenance.route, maintenance.handler, actionHook)
  .openapi(heartbeatGet.route, heartbeatGet.handler)
  .openapi(heartbeatPut.route, heartbeatPut.handler)
  .openapi(heartbeatPost.route, heartbeatPost.handler)
  .openapi(heartbeatDelete.route, heartbeatDelete.handler)
  .openapi(channels.route, channels.handler)
  .openapi(dashboardCheck.route, dashboardCheck.handler)
  .openapi(debug.route, debug.handler)
  .openapi(supportDiagnostics.route, supportDiagnostics.handler)
