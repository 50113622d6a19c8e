import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { railwayStore } from '../../lib/services/stores/railway'
import { s3Store } from '../../lib/services/stores/s3'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// Storage too: deleting an agent deletes its files' objects before their records (lib/agents/lifecycle.ts).
export default createWorker(app, { db: neonStore, kv: upstashStore, runtimes: railwayStore, storage: s3Store })
