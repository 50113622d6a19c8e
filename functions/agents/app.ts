import { createRouter } from '../../lib/app'
import * as configGet from './routes/config-get'
import * as configPut from './routes/config-put'
import * as del from './routes/delete'
import * as forUser from './routes/for-user'
import * as get from './routes/get'
import { lifecycleRoute } from './routes/lifecycle'
import * as list from './routes/list'
import * as messages from './routes/messages'
import * as provision from './routes/provision'
import * as stats from './routes/stats'
import * as sync from './routes/sync'
import * as token from './routes/token'
import * as unverify from './routes/unverify'
import * as update from './routes/update'
import * as updateImage from './routes/update-image'
import * as verification from './routes/verification'
import * as verify from './routes/verify'

const start = lifecycleRoute('start')
const stop = lifecycleRoute('stop')
const restart = lifecycleRoute('restart')
const repair = lifecycleRoute('repair')
const resetMemory = lifecycleRoute('reset-memory')

// `/api/agents/user/{userId}` before the id routes, so `user` is never read as an agent id.
export const app = createRouter()
  .openapi(provision.route, provision.handler)
  .openapi(forUser.route, forUser.handler)
  .openapi(list.route, list.handler)
  .openapi(get.route, get.handler)
  .openapi(update.route, update.handler)
  .openapi(del.route, del.handler)
  .openapi(configGet.route, configGet.handler)
  .openapi(configPut.route, configPut.handler)
  .openapi(messages.route, messages.handler)
  .openapi(stats.route, stats.handler)
  .openapi(verification.route, verification.handler)
  .openapi(verify.route, verify.handler)
  .openapi(unverify.route, unverify.handler)
  .openapi(start.route, start.handler)
  .openapi(stop.route, stop.handler)
  .openapi(restart.route, restart.handler)
  .openapi(updateImage.route, updateImage.handler)
  .openapi(repair.route, repair.handler)
  .openapi(resetMemory.route, resetMemory.handler)
  .openapi(token.route, token.handler)
  .openapi(sync.route, sync.handler)
