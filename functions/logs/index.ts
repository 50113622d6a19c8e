import { createWorker } from '../../lib/app'
import { LogTailObject } from './durable'
import { neonStore } from '../../lib/services/stores/neon'
import { railwayStore } from '../../lib/services/stores/railway'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// One per agent (binding LOG_TAILS, wrangler.toml `[env.logs]`): the routes forward to it when the binding exists.
export { LogTailObject }
export default createWorker(app, { db: neonStore, kv: upstashStore, runtimes: railwayStore })
