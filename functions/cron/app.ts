import { createRouter } from '../../lib/app'
import * as healthWait from './routes/health-wait'
import * as heartbeat from './routes/heartbeat'
import * as watchdog from './routes/watchdog'

export const app = createRouter().openapi(watchdog.route, watchdog.handler).openapi(heartbeat.route, heartbeat.handler).openapi(healthWait.route, healthWait.handler)
