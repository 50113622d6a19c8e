import { createRouter } from '../../lib/app'
import * as list from './routes/list'
import * as pair from './routes/pair'
import * as register from './routes/register'
import * as runtimeAction from './routes/runtime-action'
import * as runtimeList from './routes/runtime-list'
import * as transition from './routes/transition'

export const app = createRouter()
  .openapi(list.route, list.handler)
  .openapi(register.route, register.handler)
  .openapi(transition.route, transition.handler)
  .openapi(pair.route, pair.handler)
  .openapi(runtimeList.route, runtimeList.handler)
  .openapi(runtimeAction.route, runtimeAction.handler)
