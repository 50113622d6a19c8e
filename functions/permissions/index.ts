import { createWorker } from '../../lib/app'
import { PermissionSocketObject } from './durable'
import { neonStore } from '../../lib/services/stores/neon'
import { qstashStore } from '../../lib/services/stores/qstash'
import { upstashStore } from '../../lib/services/stores/upstash'
import { app } from './app'

export { app }
// One per user (binding PERMISSION_SOCKETS, wrangler.toml `[env.permissions]`): the routes connect and push
// through it when the binding exists.
export { PermissionSocketObject }
// Each request's expiry published and delivered (signed) through QStash.
export default createWorker(app, { db: neonStore, kv: upstashStore, queue: qstashStore })
