import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { railwayStore } from '../../lib/services/stores/railway'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// install and uninstall push the agent's skills to its runtime, through Railway
export default createWorker(app, { db: neonStore, kv: upstashStore, runtimes: railwayStore })
