import { createRouter } from '../../lib/app'
import * as changePassword from './routes/change-password'
import * as forgotPassword from './routes/forgot-password'
import * as getUser from './routes/get-user'
import * as resetMailReceiver from './routes/reset-mail-receiver'
import * as resetPassword from './routes/reset-password'
import * as updateUser from './routes/update-user'

export const app = createRouter()
  .openapi(getUser.route, getUser.handler)
  .openapi(updateUser.route, updateUser.handler)
  .openapi(updateUser.patchRoute, updateUser.handler)
  .openapi(changePassword.route, changePassword.handler)
  .openapi(forgotPassword.route, forgotPassword.handler)
  .openapi(resetPassword.route, resetPassword.handler)
  .openapi(resetMailReceiver.route, resetMailReceiver.handler)
