import { createWorker } from '../../lib/app'
import { app } from './app'

export { app }
export default createWorker(app)
