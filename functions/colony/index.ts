import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { app } from './app'

export { app }
// The session lookup needs the database; the soul hosts are plain fetches.
export default createWorker(app, { db: neonStore })
