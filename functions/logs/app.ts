import { createRouter } from '../../lib/app'
import * as active from './routes/active'
import * as history from './routes/history'
import * as stop from './routes/stop'
import * as stream from './routes/stream'

export const app = createRouter()
  .openapi(active.route, active.handler)
  .openapi(stream.route, stream.handler)
  .openapi(history.route, history.handler)
  .openapi(stop.route, stop.handler)
