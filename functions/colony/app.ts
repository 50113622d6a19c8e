import { createRouter } from '../../lib/app'
import * as status from './routes/status'

/** The colony's soul host views (spec 2 "Colony"). */
export const app = createRouter().openapi(status.route, status.handler)
