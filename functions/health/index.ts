import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { app } from './app'

export { app }
export default createWorker(app, { db: neonStore })
