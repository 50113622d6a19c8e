import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { railwayStore } from '../../lib/services/stores/railway'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// Lifecycle actions and deployments queue their health wait through QStash.
export default createWorker(app, { db: neonStore, kv: upstashStore, runtimes: railwayStore, queue: qstashStore })
