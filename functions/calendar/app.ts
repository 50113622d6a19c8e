import { createRouter } from '../../lib/app'
import { actionHook } from '../../lib/http/validation'
import * as callback from './routes/callback'
import * as get from './routes/get'
import * as post from './routes/post'

// Google Calendar (issue #11): one GET and one POST on /api/calendar, dispatched by `action`, and the OAuth callback.
export const app = createRouter()
  .openapi(get.route, get.handler)
  .openapi(post.route, post.handler, actionHook)
  .openapi(callback.route, callback.handler, callback.hook)
