import { createRouter } from '../../lib/app'
import * as create from './routes/create'
import * as del from './routes/delete'
import * as get from './routes/get'
import * as list from './routes/list'
import * as validate from './routes/validate'

// validate is POST and :id is GET/DELETE only, so `/api/keys/validate` never reaches the id routes.
export const app = createRouter()
  .openapi(create.route, create.handler)
  .openapi(list.route, list.handler)
  .openapi(validate.route, validate.handler)
  .openapi(get.route, get.handler)
  .openapi(del.route, del.handler)
