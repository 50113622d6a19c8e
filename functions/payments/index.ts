import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
export default createWorker(app, { db: neonStore, kv: upstashStore })
