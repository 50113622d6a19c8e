import { createRouter } from '../../lib/app'
import * as checkout from './routes/checkout'
import * as deployReceiver from './routes/deploy-receiver'
import * as deploySweep from './routes/deploy-sweep'
import * as expertSetup from './routes/expert-setup'
import * as verify from './routes/verify'
import * as webhook from './routes/webhook'

// Stripe: plan checkout and its verify, the expert setup checkout, the webhook, and the deploy a plan starts.
export const app = createRouter()
  .openapi(checkout.route, checkout.handler, checkout.hook)
  .openapi(verify.route, verify.handler)
  .openapi(expertSetup.route, expertSetup.handler)
  .openapi(webhook.route, webhook.handler)
  .openapi(deployReceiver.route, deployReceiver.handler)
  .openapi(deploySweep.route, deploySweep.handler)
