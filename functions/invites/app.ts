import { createRouter } from '../../lib/app'
import * as adminCreate from './routes/admin-create'
import * as adminList from './routes/admin-list'
import * as create from './routes/create'
import { generate, validate } from './routes/deprecated'
import * as verify from './routes/verify'

export const app = createRouter()
  .openapi(create.route, create.handler)
  .openapi(verify.route, verify.handler)
  .openapi(adminList.route, adminList.handler)
  .openapi(adminCreate.route, adminCreate.handler)
  .openapi(generate.route, generate.handler)
  .openapi(validate.route, validate.handler)
