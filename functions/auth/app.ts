import { createRouter } from '../../lib/app'
import * as csrf from './routes/csrf'
import * as login from './routes/login'
import * as register from './routes/register'
import * as session from './routes/session'
import * as signout from './routes/signout'
import * as trial from './routes/trial'
import * as verifyEmail from './routes/verify-email'
import * as verifyEmailResend from './routes/verify-email-resend'

export const app = createRouter()
  .openapi(register.route, register.handler)
  .openapi(csrf.route, csrf.handler)
  .openapi(login.route, login.handler)
  .openapi(session.route, session.handler)
  .openapi(signout.route, signout.handler)
  .openapi(trial.route, trial.handler)
  .openapi(verifyEmail.route, verifyEmail.handler)
  .openapi(verifyEmailResend.route, verifyEmailResend.handler)
