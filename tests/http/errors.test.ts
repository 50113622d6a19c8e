import { createRoute, z } from '@hono/zod-openapi'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createPlatformApp, createRouter, MAX_BODY_BYTES } from '../../lib/app'
import { ApiError, ERRORS, type ErrorCode } from '../../lib/http/errors'
import { jsonBody } from '../../lib/http/validation'
import { useHarness } from '../support/harness'

let app: ReturnType<typeof createPlatformApp>
/** Handler invocations per route, to prove a refusal happened before the handler. */
const ran = { echo: 0, boom: 0 }

const h = useHarness()
beforeAll(async () => {
  const router = createRouter()
    .openapi(
      createRoute({
        method: 'post',
        path: '/t/echo',
        request: { body: jsonBody(z.object({ name: z.string().min(1, 'Name required'), count: z.number().int() })) },
        responses: { 200: { description: 'ok' } },
      }),
      async (c) => {
        ran.echo++
        return c.json({ got: c.req.valid('json') }, 200)
      },
    )
    .openapi(
      createRoute({ method: 'get', path: '/t/boom', responses: { 200: { description: 'never' } } }),
      () => {
        ran.boom++
        throw new Error('secret db password xyz')
      },
    )
  router.get('/t/api-error', () => {
    throw new ApiError('CONFLICT', 'Name taken')
  })
  router.get('/t/api-error-default', () => {
    throw new ApiError('NOT_FOUND')
  })
  router.get('/t/api-error-exact', () => {
    throw new ApiError('PAYMENT_REQUIRED', { message: 'Pay first', extra: { amount: '0.01' }, headers: { 'WWW-Authenticate': 'Payment x' } })
  })
  app = createPlatformApp(() => h.services).route('/', router)
})
afterEach(() => {
  vi.restoreAllMocks()
})

const postEcho = (body: BodyInit, headers: Record<string, string> = { 'content-type': 'application/json' }, extra: RequestInit = {}) =>
  app.request('/t/echo', { method: 'POST', body, headers, ...extra })

describe('errors: request bodies', () => {
  it('a valid body reaches the handler', async () => {
    const before = ran.echo
    const res = await postEcho(JSON.stringify({ name: 'a', count: 1 }))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ got: { name: 'a', count: 1 } })
    expect(ran.echo).toBe(before + 1)
  })

  it.each(['{"name": "a",', '{name: a}', 'null x', '', '\u0000'])('malformed JSON %j → 400 {error:"Invalid JSON body"} exactly', async (raw) => {
    const before = ran.echo
    const res = await postEcho(raw)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
    expect(ran.echo).toBe(before)
  })

  it('wrong types → 400 VALIDATION with an issues array naming the fields', async () => {
    const res = await postEcho(JSON.stringify({ name: 5, count: 'x' }))
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.code).toBe('VALIDATION')
    expect(typeof body.error).toBe('string')
    expect(Array.isArray(body.issues)).toBe(true)
    expect(body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['count', 'name'])
    for (const issue of body.issues) expect(issue).toEqual({ path: expect.any(String), message: expect.any(String) })
    expect(body.error).toBe(body.issues[0].message)
  })

  it("the schema's own message is the error text", async () => {
    const res = await postEcho(JSON.stringify({ name: '', count: 1 }))
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Name required', code: 'VALIDATION', issues: [{ path: 'name', message: 'Name required' }] })
  })

  it('a JSON array or scalar where an object is required → 400 VALIDATION', async () => {
    for (const raw of ['[]', '42', '"str"', 'null']) {
      const res = await postEcho(raw)
      expect(res.status, raw).toBe(400)
      expect((await res.json()).code, raw).toBe('VALIDATION')
    }
  })

  // The brief expected 400 VALIDATION here. @hono/zod-openapi (1.6) gates declared body media types first and
  // throws HTTPException 415 when a body comes without a JSON Content-Type; onError passes it through as {error}.
  it('a body without Content-Type on a required JSON body → 415 {error:"Unsupported Media Type"}, handler not run', async () => {
    const before = ran.echo
    const res = await postEcho(new TextEncoder().encode(JSON.stringify({ name: 'a', count: 1 })), {})
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.status).toBe(415)
    expect(await res.json()).toEqual({ error: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE' })
    expect(ran.echo).toBe(before)
  })

  it('a non-JSON Content-Type (text/plain) → 415 {error:"Unsupported Media Type"}', async () => {
    const before = ran.echo
    const res = await postEcho(JSON.stringify({ name: 'a', count: 1 }), { 'content-type': 'text/plain' })
    expect(res.status).toBe(415)
    expect(await res.json()).toEqual({ error: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE' })
    expect(ran.echo).toBe(before)
  })

  it('JSON media type variants (charset, +json) are accepted', async () => {
    for (const type of ['application/json; charset=utf-8', 'APPLICATION/JSON']) {
      const res = await postEcho(JSON.stringify({ name: 'a', count: 1 }), { 'content-type': type })
      expect(res.status, type).toBe(200)
    }
  })

  it('no Content-Type and no body on a required JSON body → 400 VALIDATION, handler not run', async () => {
    const before = ran.echo
    const res = await app.request('/t/echo', { method: 'POST' })
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.code).toBe('VALIDATION')
    expect(body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['count', 'name'])
    expect(ran.echo).toBe(before)
  })
})

describe('errors: body size limit (1 MB)', () => {
  const jsonOfSize = (bytes: number) => {
    const prefix = '{"name":"a","count":1,"pad":"'
    return `${prefix}${'x'.repeat(bytes - prefix.length - 2)}"}`
  }

  it('exactly 1 MB passes', async () => {
    const body = jsonOfSize(MAX_BODY_BYTES)
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES)
    const res = await postEcho(body)
    expect(res.status).toBe(200)
  })

  it('1 MB + 1 byte with Content-Length → 413 {error:"Payload too large"}, handler never ran', async () => {
    const before = ran.echo
    const body = jsonOfSize(MAX_BODY_BYTES + 1)
    const res = await postEcho(body, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ error: 'Payload too large', code: 'PAYLOAD_TOO_LARGE' })
    expect(ran.echo).toBe(before)
  })

  it('1 MB + 1 byte streamed without Content-Length → 413, handler never ran', async () => {
    const before = ran.echo
    const bytes = new TextEncoder().encode(jsonOfSize(MAX_BODY_BYTES + 1))
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024))
        controller.close()
      },
    })
    const res = await postEcho(stream, { 'content-type': 'application/json' }, { duplex: 'half' } as RequestInit)
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ error: 'Payload too large', code: 'PAYLOAD_TOO_LARGE' })
    expect(ran.echo).toBe(before)
  })

  it('the size limit applies before routing: an unknown path with a huge body is 413 too', async () => {
    const res = await app.request('/t/nowhere', { method: 'POST', body: 'x'.repeat(MAX_BODY_BYTES + 1) })
    expect(res.status).toBe(413)
  })

  it('413 still carries the request id and CORS headers for the dashboard', async () => {
    const res = await postEcho(jsonOfSize(MAX_BODY_BYTES + 1), {
      'content-type': 'application/json',
      origin: 'http://localhost:3000',
    })
    expect(res.status).toBe(413)
    expect(res.headers.get('x-request-id')).toBeTruthy()
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:3000')
  })
})

describe('errors: unhandled and typed errors', () => {
  it('an unhandled throw → 500 {error:"Internal server error"}, logged with the request id, nothing leaked', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const res = await app.request('/t/boom')
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)).toEqual({ error: 'Internal server error', code: 'INTERNAL' })
    expect(text).not.toContain('secret')
    const requestId = res.headers.get('x-request-id')
    expect(requestId).toMatch(/^[\w-]+$/)
    expect(logged).toHaveBeenCalledTimes(1)
    const event = JSON.parse(String(logged.mock.calls[0][0]))
    expect(event).toMatchObject({ level: 'error', event: 'request.unhandled_error', requestId, method: 'GET', route: '/t/boom' })
    expect(event.errorMessage).toBe('secret db password xyz') // not a database error: the log keeps the detail the client never sees
  })

  it("a caller's own X-Request-Id is logged beside the server's id, never as it", async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const res = await app.request('/t/boom', { headers: { 'x-request-id': 'trace-abc-123' } })
    expect(res.status).toBe(500)
    const requestId = res.headers.get('x-request-id')
    expect(requestId).not.toBe('trace-abc-123')
    expect(JSON.parse(String(logged.mock.calls[0][0]))).toMatchObject({ requestId, clientRequestId: 'trace-abc-123' })
  })

  it('unknown path → 404 {error:"Not found"}', async () => {
    for (const path of ['/nope', '/api/nope', '/t/echo/extra']) {
      const res = await app.request(path)
      expect(res.status, path).toBe(404)
      expect(await res.json()).toEqual({ error: 'Not found', code: 'NOT_FOUND' })
    }
  })

  it('the code decides the status and the default text; a thrown text replaces the default', async () => {
    const coded = await app.request('/t/api-error')
    expect(coded.status).toBe(409)
    expect(await coded.json()).toEqual({ error: 'Name taken', code: 'CONFLICT' })
    const plain = await app.request('/t/api-error-default')
    expect(plain.status).toBe(404)
    expect(await plain.json()).toEqual({ error: 'Not found', code: 'NOT_FOUND' })
  })

  it("an exact code keeps the spec's string as `error` and puts the thrown text in `message`; a 402 is no-store", async () => {
    const res = await app.request('/t/api-error-exact')
    expect(res.status).toBe(402)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('www-authenticate')).toBe('Payment x')
    expect(await res.json()).toEqual({ error: 'payment_required', code: 'PAYMENT_REQUIRED', message: 'Pay first', amount: '0.01' })
  })

  it('every code has one status and a default text, and every status is an error status', () => {
    for (const [code, [status, text]] of Object.entries(ERRORS)) {
      expect(status, code).toBeGreaterThanOrEqual(400)
      expect(status, code).toBeLessThan(600)
      expect(text.length, code).toBeGreaterThan(0)
      expect(new ApiError(code as ErrorCode).status, code).toBe(status)
    }
  })

  it('every error carries X-Request-Id and is JSON', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    for (const res of [await app.request('/nope'), await app.request('/t/api-error'), await app.request('/t/boom'), await postEcho('{')]) {
      expect(res.headers.get('x-request-id')).toBeTruthy()
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    }
  })
})
