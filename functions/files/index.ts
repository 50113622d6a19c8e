import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { s3Store } from '../../lib/services/stores/s3'
import { app } from './app'

export { app }
// Records and the quota row in Neon; objects in any S3-compatible bucket, over fetch (lib/storage/s3.ts).
export default createWorker(app, { db: neonStore, storage: s3Store })
