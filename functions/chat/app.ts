import { createRouter } from '../../lib/app'
import * as chat from './routes/chat'
import * as claim from './routes/claim'
import * as complete from './routes/complete'
import * as deliver from './routes/deliver'
import * as fail from './routes/fail'
import * as job from './routes/job'
import * as status from './routes/status'
import * as sweep from './routes/sweep'

/** Chat through the user's agent: queue a message, the queue's delivery to the runtime, job polling, claims under a lease and their end (complete, fail), the gateway's status (spec 2 "Gateway"). */
export const app = createRouter()
  .openapi(chat.route, chat.handler)
  .openapi(status.route, status.handler)
  .openapi(deliver.route, deliver.handler)
  .openapi(job.route, job.handler)
  .openapi(claim.route, claim.handler)
  .openapi(complete.route, complete.handler)
  .openapi(fail.route, fail.handler)
  .openapi(sweep.route, sweep.handler)
