import { createRouter } from '../../lib/app'
import * as call from './routes/call'

/** The paid plugin gateway (spec 2 "Gateway"): `POST /api/v1/gateway`. */
export const app = createRouter().openapi(call.route, call.handler)
