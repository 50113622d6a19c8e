import { createWorker } from '../../lib/app'
import { neonStore } from '../../lib/services/stores/neon'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// Sessions and managed wallets in Neon, the rate limiter on Upstash; balances from the Base RPC, top-ups through Stripe.
export default createWorker(app, { db: neonStore, kv: upstashStore })
