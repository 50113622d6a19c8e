import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { railwayStore } from '../../lib/services/stores/railway'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// probes, lifecycle calls and gateway calls reach runtimes through Railway; a start's health wait goes through QStash
export default createWorker(app, { db: neonStore, kv: upstashStore, runtimes: railwayStore, queue: qstashStore })
