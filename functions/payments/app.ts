import { createRouter } from '../../lib/app'
import * as get from './routes/get'
import * as open from './routes/open'

/** Payment sessions: open one with an on-chain deposit, read its balance. The gateway spends them (lib/payments/session-charge.ts). */
export const app = createRouter().openapi(open.route, open.handler).openapi(get.route, get.handler)
