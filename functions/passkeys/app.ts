import { createRouter } from '../../lib/app'
import * as authOptions from './routes/auth-options'
import * as authVerify from './routes/auth-verify'
import * as del from './routes/delete'
import * as list from './routes/list'
import * as registerOptions from './routes/register-options'
import * as registerVerify from './routes/register-verify'

export const app = createRouter()
  .openapi(registerOptions.route, registerOptions.handler)
  .openapi(registerVerify.route, registerVerify.handler)
  .openapi(authOptions.route, authOptions.handler)
  .openapi(authVerify.route, authVerify.handler)
  .openapi(list.route, list.handler)
  .openapi(del.route, del.handler)
