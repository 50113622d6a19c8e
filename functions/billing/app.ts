import { createRouter } from '../../lib/app'
import { actionHook } from '../../lib/http/validation'
import * as getBilling from './routes/get-billing'
import * as postBilling from './routes/post-billing'

export const app = createRouter().openapi(getBilling.route, getBilling.handler).openapi(postBilling.route, postBilling.handler, actionHook)
