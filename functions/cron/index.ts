import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { railwayStore } from '../../lib/services/stores/railway'
import { app } from './app'

export { app }
// The watchdog: QStash delivers the cron and its batches (and takes the batches and delayed re-probes); repairs
// go to Railway; the crash-loop notice goes through the mail port (Resend).
export default createWorker(app, { db: neonStore, queue: qstashStore, runtimes: railwayStore })
