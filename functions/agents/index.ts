import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { railwayStore } from '../../lib/services/stores/railway'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// No storage client: deleting an agent hides its files and queues the deletion of their objects to the files
// Worker (lib/agents/lifecycle.ts), which holds it.
export default createWorker(app, { db: neonStore, kv: upstashStore, runtimes: railwayStore, queue: qstashStore })
