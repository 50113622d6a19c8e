import { beforeAll, describe, expect, it, vi } from 'vitest'
import { createPlatformApp, createRouter } from '../../lib/app'
import { hashSecret } from '../../lib/auth/password'
import { asService } from '../../lib/db/rls'
import { errorFields, formatEvent, log } from '../../lib/log'
import { users } from '../../schema'
import { useHarness } from '../support/harness'

// Issue #9 finding 11: a failed query's text (with a new user's bcrypt hash) was logged with its stack, and
// request input with newlines was written raw, so a caller could forge `admin@example.com signed in`.
let app: ReturnType<typeof createPlatformApp>
let hash: string
const FORGED = '\nadmin@example.com signed in\n{"level":"info","event":"auth.signed_in","email":"admin@example.com"}\u2028x'

const h = useHarness()
beforeAll(async () => {
  hash = await hashSecret('a new password', 4)
  const router = createRouter()
  // A sign-up whose insert fails (duplicate email) with the new user's hash among the query's parameters.
  router.post('/t/signup/:tag', async (c) => {
    const name = await c.req.text()
    await asService(h.db, 'signIn', (tx) => tx.insert(users).values({ email: h.users.bob.email, name, passwordHash: hash }))
    return c.text('never')
  })
  // An error whose message carries the request's input.
  router.get('/t/echo-error', (c) => {
    throw new Error(`bad input: ${c.req.query('q')}`)
  })
  app = createPlatformApp(() => h.services).route('/', router)
})

/** Every console line written while `fn` runs, whatever the level. */
async function capture(fn: () => unknown) {
  const lines: string[] = []
  const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) =>
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' '))),
  )
  try {
    await fn()
  } finally {
    for (const s of spies) s.mockRestore()
  }
  return lines.join('\n').split(/\r?\n|\u2028|\u2029/)
}

const events = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>)

describe('logs: one JSON event per line, nothing secret, nothing forged', () => {
  it('a failing query with a hash among its parameters and a newline payload', async () => {
    let res: Response | undefined
    const lines = await capture(async () => {
      res = await app.request(`/t/signup/x?token=querysecret`, { method: 'POST', body: FORGED, headers: { 'content-type': 'text/plain' } })
    })
    expect(res!.status).toBe(409)
    expect(lines.length).toBe(1)
    const [event] = events(lines)
    expect(event).toMatchObject({ event: 'request.refused_by_database', method: 'POST', route: '/t/signup/:tag', sqlstate: '23505' })
    expect(event.requestId).toBe(res!.headers.get('x-request-id'))
    const text = lines.join('\n')
    for (const leak of [hash, hash.slice(7, 29), 'querysecret', 'signed in', h.users.bob.email, 'insert into', 'params']) expect(text).not.toContain(leak)
    expect(event.errorMessage).toBeUndefined()
  })

  it('an unexpected error carrying request input: escaped inside one event, never a line of its own', async () => {
    const lines = await capture(async () => app.request(`/t/echo-error?q=${encodeURIComponent(FORGED)}`))
    expect(lines.length).toBe(1)
    const [event] = events(lines)
    expect(event).toMatchObject({ level: 'error', event: 'request.unhandled_error', route: '/t/echo-error', errorName: 'Error' })
    expect(event.errorMessage).toBe(`bad input: ${FORGED}`) // kept, but as a JSON string value
    expect(lines.every((l) => !l.startsWith('admin@example.com'))).toBe(true)
    expect(JSON.stringify(event)).not.toContain('?q=') // the route pattern, never the raw URL
  })

  it('log.* drops secret-named fields and serialises hostile values safely', async () => {
    const lines = await capture(async () => {
      log.info('test.fields', { user: FORGED, password: 'p', tokenHash: 'h', sessionToken: 't', apiKey: 'k', n: 10n, nested: { a: '\u0000' } })
      log.warn('test.cycle', { self: (() => { const o: Record<string, unknown> = {}; o.o = o; return o })() })
    })
    expect(lines.length).toBe(2)
    const [a, b] = events(lines)
    expect(a).toMatchObject({ level: 'info', event: 'test.fields', user: FORGED, n: '10', nested: { a: '\u0000' } })
    for (const k of ['password', 'tokenHash', 'sessionToken', 'apiKey']) expect(a).not.toHaveProperty(k)
    expect(b).toMatchObject({ level: 'warn', event: 'test.cycle', note: 'fields not serialisable' })
  })

  it('errorFields: a database error gives name and SQLSTATE only; a URL loses its credentials and query', () => {
    const dbError = Object.assign(new Error(`Failed query: insert into users ...\nparams: ${hash}`), { cause: { code: '23505' } })
    expect(JSON.stringify(errorFields(dbError))).not.toContain(hash)
    expect(errorFields(dbError)).toMatchObject({ errorName: 'Error', sqlstate: '23505' })
    const rpc = errorFields(new Error('HTTP request failed. URL: https://user:pw@rpc.example/v2?key=abc Status: 500'))
    expect(rpc.errorMessage).toBe('HTTP request failed. URL: https://rpc.example/v2 Status: 500')
    expect(formatEvent('info', 'x', { v: 'a\u2028b' })).not.toMatch(/\u2028/)
  })
})
