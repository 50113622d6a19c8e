import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleFunction } from '../../infra/bundle'
import type { DurableNamespaceLike } from '../../lib/logs/backend'
import { acceptSocket } from '../support/worker-socket'
import { SOCKET_ID_HEADER, SOCKET_OBJECT_ORIGIN, SOCKET_SESSION_HEADER, SOCKET_USER_HEADER } from '../../functions/permissions/durable'

// The permissions Worker's Durable Object in workerd, as deployed (its bundle, the PERMISSION_SOCKETS binding of
// wrangler.toml), called two ways: directly through its namespace, and through a Worker that runs the route's
// own code after the session check (`permissionSockets(c).connect` with the pending, `notifyDashboards`), on the
// platform's middleware, built from this source (the real route needs a database for the session).
const FORWARDER = `
import { createPlatformApp } from './lib/app'
import { managedServices } from './lib/services/managed'
import { notifyDashboards, permissionSockets } from './functions/permissions/sockets'
import { afterSessionsEnded } from './lib/auth/session-bound'
export { PermissionSocketObject } from './functions/permissions/durable'

const pending = (userId) => [1, 2].map((n) => ({ type: 'permission_request', requestId: userId + '-pending-' + n, agentId: 'a', toolName: 't', toolInput: {}, reason: 'r', createdAt: '2026-01-01T00:00:00.000Z' }))
const app = createPlatformApp(managedServices({}))
const signedIn = (c, next) => { c.set('user', { id: c.req.param('userId'), email: 'x@example.com', name: 'x', isAdmin: false }); return next() }
const session = (c) => ({ userId: c.req.param('userId'), sessionHash: c.req.query('session') ?? 'session-default', expiresAt: Date.now() + 3600000 })
app.get('/connect/:userId', signedIn, (c) => permissionSockets(c).connect(c, pending(c.req.param('userId')), session(c)))
// What sign-out, a password change or reset, RISC and the mailbox proof run once their deletion has committed.
app.post('/ended/:userId', async (c) => {
  await afterSessionsEnded(c, (await c.req.json()).map((tokenHash) => ({ userId: c.req.param('userId'), tokenHash })))
  return c.json({ ok: true })
})
app.post('/push/:userId', async (c) => {
  await notifyDashboards(c, c.req.param('userId'), await c.req.json())
  return c.json({ ok: true })
})
export default app
`

let mf: Miniflare
let ns: DurableNamespaceLike
const bindings = { APP_ORIGIN: 'http://localhost:3000', SESSION_SECRET: 'smoke-secret' }
beforeAll(async () => {
  const [deployed, forwarder] = await Promise.all([
    bundleFunction(new URL('../../functions/permissions/index.ts', import.meta.url).pathname),
    bundleFunction({ contents: FORWARDER }),
  ])
  mf = new Miniflare({
    workers: [
      { name: 'permissions', modules: [{ type: 'ESModule', path: 'index.mjs', contents: deployed.code }], compatibilityDate: '2026-04-01', bindings, durableObjects: { PERMISSION_SOCKETS: 'PermissionSocketObject' } },
      {
        name: 'forwarder',
        routes: ['forwarder.test/*'],
        modules: [{ type: 'ESModule', path: 'forwarder.mjs', contents: forwarder.code }],
        compatibilityDate: '2026-04-01',
        bindings,
        durableObjects: { PERMISSION_SOCKETS: { className: 'PermissionSocketObject', scriptName: 'permissions' } },
      },
    ],
  })
  // miniflare types the namespace with workers-types, which this project does not install
  ns = (await mf.getDurableObjectNamespace('PERMISSION_SOCKETS', 'permissions')) as unknown as DurableNamespaceLike
})
afterAll(() => mf?.dispose())

const bound = (expiresAt = Date.now() + 3600_000) => JSON.stringify({ sessionHash: 'direct-session', expiresAt })
const connectDirect = (userId: string, socketId: string, session = bound()) =>
  ns.get(ns.idFromName(userId)).fetch(`${SOCKET_OBJECT_ORIGIN}/connect`, {
    headers: { upgrade: 'websocket', [SOCKET_USER_HEADER]: userId, [SOCKET_ID_HEADER]: socketId, [SOCKET_SESSION_HEADER]: session },
  }) as unknown as Promise<Response>
const settle = () => new Promise((r) => setTimeout(r, 200))
const decided = (requestId: string) => ({ type: 'permission_decided', requestId, status: 'approved' })

describe('PermissionSocketObject in workerd', () => {
  it('through the Worker: the upgrade is accepted, the pending arrive first and in order, then pushes reach every socket of that user only', async () => {
    const a1 = acceptSocket(await mf.dispatchFetch('http://forwarder.test/connect/alice', { headers: { upgrade: 'websocket' } }))
    expect((await a1.next(2)).map((m) => m.requestId)).toEqual(['alice-pending-1', 'alice-pending-2'])
    const a2 = acceptSocket(await mf.dispatchFetch('http://forwarder.test/connect/alice', { headers: { upgrade: 'websocket' } }))
    const b = acceptSocket(await mf.dispatchFetch('http://forwarder.test/connect/bob', { headers: { upgrade: 'websocket' } }))
    await a2.next(2)
    await b.next(2)

    const push = await mf.dispatchFetch('http://forwarder.test/push/alice', { method: 'POST', body: JSON.stringify(decided('r-1')) })
    expect(push.status).toBe(200)
    expect(await a1.next(1)).toEqual([decided('r-1')])
    expect(await a2.next(1)).toEqual([decided('r-1')])
    await settle()
    expect(b.messages).toEqual([])
  })

  it('directly: a push to one socket id reaches that socket alone, even queued before the client accepts', async () => {
    const first = await connectDirect('carol', 'c-1')
    const other = acceptSocket(await connectDirect('carol', 'c-2'))
    const stub = ns.get(ns.idFromName('carol'))
    const res = await stub.fetch(`${SOCKET_OBJECT_ORIGIN}/push`, { method: 'POST', body: JSON.stringify({ userId: 'carol', socketId: 'c-1', messages: [decided('q')] }) })
    expect(await res.json()).toEqual({ delivered: 1 })
    expect(await acceptSocket(first).next(1)).toEqual([decided('q')])
    await settle()
    expect(other.messages).toEqual([])
  })

  it('a malformed message is answered on its socket, which stays open; a decision without a database says so', async () => {
    const d = acceptSocket(await connectDirect('dave', 'd-1'))
    const peer = acceptSocket(await connectDirect('dave', 'd-2'))
    d.ws.send('not json')
    expect(await d.next(1)).toEqual([{ type: 'error', requestId: null, error: 'Invalid JSON message', code: 'INVALID_JSON' }])
    d.ws.send(JSON.stringify({ type: 'decision', requestId: 'r-9', decision: 'approve' }))
    expect(await d.next(1)).toEqual([{ type: 'error', requestId: 'r-9', error: 'Database not configured', code: 'NOT_CONFIGURED' }])
    const stub = ns.get(ns.idFromName('dave'))
    const res = await stub.fetch(`${SOCKET_OBJECT_ORIGIN}/push`, { method: 'POST', body: JSON.stringify({ userId: 'dave', messages: [decided('after')] }) })
    expect(await res.json()).toEqual({ delivered: 2 })
    expect(await d.next(1)).toEqual([decided('after')])
    expect(await peer.next(1)).toEqual([decided('after')])
  })

  it('a connect that is not an upgrade, or names no user or no session, is 400; other paths 404', async () => {
    const stub = ns.get(ns.idFromName('erin'))
    expect((await stub.fetch(`${SOCKET_OBJECT_ORIGIN}/connect`, { headers: { [SOCKET_USER_HEADER]: 'erin', [SOCKET_ID_HEADER]: 'e', [SOCKET_SESSION_HEADER]: bound() } })).status).toBe(400)
    expect((await stub.fetch(`${SOCKET_OBJECT_ORIGIN}/connect`, { headers: { upgrade: 'websocket', [SOCKET_SESSION_HEADER]: bound() } })).status).toBe(400)
    expect((await stub.fetch(`${SOCKET_OBJECT_ORIGIN}/connect`, { headers: { upgrade: 'websocket', [SOCKET_USER_HEADER]: 'erin', [SOCKET_ID_HEADER]: 'e' } })).status).toBe(400)
    expect((await stub.fetch(`${SOCKET_OBJECT_ORIGIN}/elsewhere`)).status).toBe(404)
  })

  it('a session that ends: the Worker that ended it tells the object; its sockets close (4401) and hear nothing more, the other session’s keep hearing', async () => {
    const stolen = acceptSocket(await mf.dispatchFetch('http://forwarder.test/connect/frank?session=stolen', { headers: { upgrade: 'websocket' } }))
    const own = acceptSocket(await mf.dispatchFetch('http://forwarder.test/connect/frank?session=own', { headers: { upgrade: 'websocket' } }))
    await stolen.next(2)
    await own.next(2)
    const ended = await mf.dispatchFetch('http://forwarder.test/ended/frank', { method: 'POST', body: JSON.stringify(['stolen']) })
    expect(ended.status).toBe(200)
    expect(await stolen.closed).toEqual({ code: 4401, reason: 'Session ended' })
    await mf.dispatchFetch('http://forwarder.test/push/frank', { method: 'POST', body: JSON.stringify(decided('after-end')) })
    expect(await own.next(1)).toEqual([decided('after-end')])
    await settle()
    expect(stolen.messages).toEqual([])
    // Another user's object is not told anything by frank's notice, nor is a session of another user closed by name.
    const stub = ns.get(ns.idFromName('frank'))
    const wrongUser = await stub.fetch(`${SOCKET_OBJECT_ORIGIN}/sessions-ended`, { method: 'POST', body: JSON.stringify({ userId: 'mallory', sessionHashes: ['own'] }) })
    expect(await wrongUser.json()).toEqual({ closed: 0 })
    expect((await stub.fetch(`${SOCKET_OBJECT_ORIGIN}/sessions-ended`, { method: 'POST', body: '{"userId": 1}' })).status).toBe(400)
  })

  it('a socket whose session has expired gets no push and is closed', async () => {
    const expired = acceptSocket(await connectDirect('gina', 'g-1', bound(Date.now() - 1000)))
    const live = acceptSocket(await connectDirect('gina', 'g-2'))
    const res = await ns.get(ns.idFromName('gina')).fetch(`${SOCKET_OBJECT_ORIGIN}/push`, { method: 'POST', body: JSON.stringify({ userId: 'gina', messages: [decided('x')] }) })
    expect(await res.json()).toEqual({ delivered: 1 })
    expect(await live.next(1)).toEqual([decided('x')])
    expect(await expired.closed).toEqual({ code: 4401, reason: 'Session ended' })
    expect(expired.messages).toEqual([])
  })

  it('the deployed Worker refuses the socket without a session (401), before any upgrade', async () => {
    const res = await mf.dispatchFetch('http://localhost/api/permissions/socket', { headers: { upgrade: 'websocket' } })
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
  })
})
