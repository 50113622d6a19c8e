import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// Sessions in Postgres; rate limits and the live view's cache in Redis; the 2-hour expiry through QStash.
export default createWorker(app, { db: neonStore, kv: upstashStore, queue: qstashStore })
