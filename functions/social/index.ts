import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// Posts in Neon; the limiter in Upstash (KV_REST_API_* or the platform's UPSTASH_REDIS_REST_*).
export default createWorker(app, { db: neonStore, kv: upstashStore })
