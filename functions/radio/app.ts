import { createRouter } from '../../lib/app'
import * as create from './routes/create'
import * as end from './routes/end'
import * as expire from './routes/expire'
import * as live from './routes/live'
import * as webhook from './routes/webhook'

// DJ radio: the public live view, sessions started by a smart wallet and ended with its DJ token, Mux's webhook,
// and the 2-hour expiry the queue delivers.
export const app = createRouter()
  .openapi(live.route, live.handler)
  .openapi(create.route, create.handler)
  .openapi(end.route, end.handler)
  .openapi(webhook.route, webhook.handler)
  .openapi(expire.route, expire.handler)
