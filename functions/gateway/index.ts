import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// sessions and chain_payments in Postgres; challenges, usage units and rate limits in Redis
export default createWorker(app, { db: neonStore, kv: upstashStore })
