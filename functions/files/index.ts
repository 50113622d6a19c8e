import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { s3Store } from './storage/store'
import { app } from './app'

export { app }
// Records and the quota row in Neon; objects in any S3-compatible bucket (storage/s3.ts); the queue delivers,
// signed, the deletes an agent's delete hands over (and takes back the rest of a long one).
export default createWorker(app, { db: neonStore, storage: s3Store, queue: qstashStore })
