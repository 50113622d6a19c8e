import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// a completed plan checkout queues the subscription deploy and receives it back signed
export default createWorker(app, { db: neonStore, kv: upstashStore, queue: qstashStore })
