import { createRouter } from '../../lib/app'
import * as chat from './routes/chat'
import * as claim from './routes/claim'
import * as deliver from './routes/deliver'
import * as job from './routes/job'
import * as status from './routes/status'
import * as sweep from './routes/sweep'

/** Chat through the user's agent: queue a message, the queue's delivery to the runtime, job polling and claims, the gateway's status (spec 2 "Gateway"). */
export const app = createRouter()
  .openapi(chat.route, chat.handler)
  .openapi(status.route, status.handler)
  .openapi(deliver.route, deliver.handler)
  .openapi(job.route, job.handler)
  .openapi(claim.route, claim.handler)
  .openapi(sweep.route, sweep.handler)
