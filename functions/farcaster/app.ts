import { createRouter } from '../../lib/app'
import * as refresh from './routes/refresh'
import * as refreshMeta from './routes/refresh-meta'
import * as tokenGating from './routes/token-gating'
import * as verify from './routes/verify'
import * as verifyMeta from './routes/verify-meta'

/** Farcaster sign-in (Quick Auth ID tokens), its session tokens, and the chain-8453 token gate. */
export const app = createRouter()
  .openapi(verifyMeta.route, verifyMeta.handler)
  .openapi(verify.route, verify.handler)
  .openapi(refreshMeta.route, refreshMeta.handler)
  .openapi(refresh.route, refresh.handler)
  .openapi(tokenGating.getRoute, tokenGating.getHandler)
  .openapi(tokenGating.postRoute, tokenGating.postHandler)
