import { describe, expect, it, vi } from 'vitest'
import { useHarness } from '../support/harness'

// One `request` event per request (lib/http/request-log.ts): pattern, status, duration, ids, user; nothing
// else from the request. The harness turns the event off; this file asks for it.
const h = useHarness({ env: { LOG_REQUESTS: '1' } })
const quiet = useHarness()

/** Every console line written while `fn` runs, whatever the level. */
async function capture(fn: () => Response | Promise<Response>) {
  const lines: string[] = []
  const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) =>
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' '))),
  )
  try {
    const res = await fn()
    await res.arrayBuffer()
    return { res, lines: lines.join('\n').split(/\r?\n/).filter(Boolean) }
  } finally {
    for (const s of spies) s.mockRestore()
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe('request log: one JSON line per request', () => {
  it('a signed-in request: pattern, status, duration, ids and user; no query, headers, cookie or forged id', async () => {
    const forged = 'trace-1 {"event":"request","userId":"admin"}' + 'x'.repeat(500)
    const { res, lines } = await capture(() =>
      h.web.request('/api/user?token=querysecret&email=leak@example.com', {
        headers: { cookie: h.users.alice.cookie, 'x-request-id': forged, 'user-agent': 'agent-secret-ua', authorization: 'Bearer sk_headersecret' },
      }),
    )
    expect(res.status).toBe(200)
    expect(lines).toHaveLength(1)
    const event = JSON.parse(lines[0])
    expect(Object.keys(event).sort()).toEqual(
      ['level', 'event', 'time', 'requestId', 'clientRequestId', 'method', 'route', 'status', 'durationMs', 'userId'].sort(),
    )
    expect(event).toMatchObject({ level: 'info', event: 'request', method: 'GET', route: '/api/user', status: 200, userId: h.users.alice.id })
    expect(Number.isNaN(Date.parse(event.time))).toBe(false)
    expect(event.durationMs).toBeGreaterThanOrEqual(0)
    // The id is the server's, returned to the caller; the caller's own is kept apart, sanitised and capped.
    expect(event.requestId).toMatch(UUID)
    expect(res.headers.get('x-request-id')).toBe(event.requestId)
    expect(event.clientRequestId).toBe(('trace-1event:requestuserId:admin' + 'x'.repeat(64)).slice(0, 64))
    for (const leak of ['querysecret', 'leak@example.com', '?', h.users.alice.token, 'agent-secret-ua', 'sk_headersecret', h.users.alice.email])
      expect(lines[0]).not.toContain(leak)
  })

  it('an id with parameters logs the pattern; an unknown path has no pattern; errors keep the same ids', async () => {
    const id = crypto.randomUUID()
    const byId = await capture(() => h.web.request(`/api/keys/${id}`, { headers: { cookie: h.users.bob.cookie } }))
    const [keyEvent] = byId.lines.map((l) => JSON.parse(l))
    expect(keyEvent).toMatchObject({ event: 'request', route: '/api/keys/:id', status: byId.res.status, userId: h.users.bob.id })
    expect(byId.lines[0]).not.toContain(id)

    const missing = await capture(() => h.web.request('/api/nope/123'))
    expect(missing.lines).toHaveLength(1)
    const miss = JSON.parse(missing.lines[0])
    expect(miss).toMatchObject({ event: 'request', method: 'GET', status: 404 })
    expect(miss).not.toHaveProperty('route')
    expect(miss).not.toHaveProperty('userId')
    expect(miss).not.toHaveProperty('clientRequestId')
    expect(missing.lines[0]).not.toContain('/api/nope')
  })

  it('a request no caller sent an id for gets a fresh one each time', async () => {
    const a = await capture(() => h.web.request('/api/version'))
    const b = await capture(() => h.web.request('/api/version', { headers: { 'x-request-id': a.res.headers.get('x-request-id')! } }))
    const [ea, eb] = [JSON.parse(a.lines[0]), JSON.parse(b.lines[0])]
    expect(ea.requestId).not.toBe(eb.requestId) // replaying another request's id does not reuse it
    expect(eb.clientRequestId).toBe(ea.requestId)
    expect(b.res.headers.get('x-request-id')).toBe(eb.requestId)
  })

  it('LOG_REQUESTS=0 (the harness default) writes nothing, and the id header is still there', async () => {
    const { res, lines } = await capture(() => quiet.web.request('/api/version'))
    expect(res.status).toBe(200)
    expect(lines).toEqual([])
    expect(res.headers.get('x-request-id')).toMatch(UUID)
  })
})
