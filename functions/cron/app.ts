import { createRouter } from '../../lib/app'
import * as watchdog from './routes/watchdog'

export const app = createRouter().openapi(watchdog.route, watchdog.handler)
