import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { railwayStore } from '../../lib/services/stores/railway'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// Jobs in Neon; the workload gate and the per-IP limit in Upstash; jobs published and delivered through QStash;
// runtimes' gateways reached through Railway.
export default createWorker(app, { db: neonStore, kv: upstashStore, queue: qstashStore, runtimes: railwayStore })
