import { createRouter } from '../../lib/app'
import * as classify from './routes/classify'
import * as decide from './routes/decide'
import * as expire from './routes/expire'
import * as list from './routes/list'
import * as poll from './routes/poll'
import * as socket from './routes/socket'

export const app = createRouter()
  .openapi(classify.route, classify.handler)
  .openapi(poll.route, poll.handler)
  .openapi(list.route, list.handler)
  .openapi(socket.route, socket.handler)
  .openapi(decide.route, decide.handler)
  .openapi(expire.route, expire.handler)
