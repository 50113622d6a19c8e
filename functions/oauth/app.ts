import { createRouter } from '../../lib/app'
import * as googleCallback from './routes/google-callback'
import * as googleStart from './routes/google-start'
import * as risc from './routes/risc'
import * as riscHealth from './routes/risc-health'
import * as riscLegacy from './routes/risc-legacy'
import * as riscReceiver from './routes/risc-receiver'

// Google sign-in and cross-account protection (RISC). The legacy RISC path is a POST under /api/auth/google,
// a different method and depth from the two sign-in GETs, so nothing shadows anything.
export const app = createRouter()
  .openapi(googleStart.route, googleStart.handler)
  .openapi(googleCallback.route, googleCallback.handler, googleCallback.hook)
  .openapi(riscHealth.route, riscHealth.handler)
  .openapi(risc.route, risc.handler)
  .openapi(riscReceiver.route, riscReceiver.handler)
  .openapi(riscLegacy.route, riscLegacy.handler)
