import { createRoute, z } from '@hono/zod-openapi'
import { describe, expect, it } from 'vitest'
import { createRouter } from '../../lib/app'
import { errorResponse, ok } from '../../lib/http/openapi'
import { openApiDocument } from '../../lib/http/openapi-docs'
import { checkedApp, Contract, ContractViolation } from '../support/response-contract'

/**
 * The harness checks every answer against its document (tests/support/response-contract.ts). Here a tiny app whose
 * answers can be made to break its own document shows what a drift looks like: the request fails, naming the
 * operation, the status and the JSON pointer of what differs.
 */
const Thing = z.object({ id: z.string().max(64), name: z.string().max(64), tags: z.array(z.string().max(16)).max(4) }).openapi('Thing')

/** What the handler answers next: set by each test. */
let answer: { status: number; body?: unknown; type?: string; headers?: Record<string, string> } = { status: 200 }

const getThing = createRoute({
  method: 'get',
  path: '/things/{id}',
  operationId: 'getThing',
  summary: 'A thing',
  request: { params: z.object({ id: z.string().max(64) }) },
  responses: {
    200: {
      ...ok(Thing),
      headers: { 'X-Thing-Version': { description: 'Required', required: true, schema: { type: 'string', maxLength: 16 } } },
    },
    404: errorResponse('Unknown thing (`NOT_FOUND`)'),
  },
})

const listThings = createRoute({
  method: 'get',
  path: '/things',
  operationId: 'listThings',
  summary: 'Every thing',
  responses: { 200: ok(z.object({ things: z.array(Thing).max(10) })) },
})

const router = createRouter()
router.openapi(listThings, ((c: any) => c.json({ things: [] }, 200)) as never)
router.openapi(getThing, ((c: any) => {
  const { status, body, type = 'application/json', headers = {} } = answer
  return c.body(body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body), status, { 'content-type': type, ...headers })
}) as never)
router.notFound((c) => c.json({ error: 'Not found', code: 'NOT_FOUND' }, 404))

const contract = new Contract('tiny API', openApiDocument(router, 'Tiny'))
const app = checkedApp(router, contract)
const good = { id: 't1', name: 'kettle', tags: ['hot'] }
const versioned = { 'x-thing-version': '1' }

async function violation(path = '/things/t1', init?: RequestInit) {
  const failure = await Promise.resolve(app.request(path, init)).then(
    () => null,
    (e: unknown) => e,
  )
  expect(failure).toBeInstanceOf(ContractViolation)
  return (failure as Error).message
}

describe('the response check (every harness request goes through it)', () => {
  it('an answer that matches its document passes, through request and fetch alike', async () => {
    answer = { status: 200, body: good, headers: versioned }
    expect((await app.request('/things/t1')).status).toBe(200)
    expect((await app.fetch(new Request('http://localhost/things/t1/'))).status).toBe(200)
    answer = { status: 404, body: { error: 'Unknown thing', code: 'NOT_FOUND' } }
    expect((await app.request('/things/nope')).status).toBe(404)
  })

  it('a body that breaks its schema names the operation, the status and the JSON pointer', async () => {
    answer = { status: 200, body: { ...good, name: null }, headers: versioned }
    const message = await violation()
    expect(message).toContain('tiny API: GET /things/{id} (getThing) answered 200')
    expect(message).toContain('body at `/name` must be string')
    answer = { status: 200, body: { ...good, tags: ['hot', 42] }, headers: versioned }
    expect(await violation()).toContain('body at `/tags/1` must be string')
    answer = { status: 200, body: { id: 't1', tags: [] }, headers: versioned }
    expect(await violation()).toMatch(/body at `\/` must have required property 'name'/)
  })

  it('an undocumented status, another content type, a missing required header or a body that is not JSON fails', async () => {
    answer = { status: 418, body: good }
    expect(await violation()).toMatch(/answered 418: an undocumented status \(documented: 200, 404, 500\)/)
    answer = { status: 200, body: 'kettle', type: 'text/plain', headers: versioned }
    expect(await violation()).toContain('content type `text/plain`, documented: application/json')
    answer = { status: 200, body: good }
    expect(await violation()).toContain('the required header `X-Thing-Version` is missing')
    answer = { status: 200, body: '{"id":', headers: versioned }
    expect(await violation()).toContain('a body that is not JSON')
  })

  it('statuses the document promises for any route are checked against the error shape and their codes', async () => {
    answer = { status: 400, body: { error: 'Invalid JSON body', code: 'INVALID_JSON' } }
    expect((await app.request('/things/t1')).status).toBe(400)
    answer = { status: 400, body: { error: 'Nope', code: 'FORBIDDEN' } }
    expect(await violation()).toContain('code `FORBIDDEN`')
    answer = { status: 503, body: { error: 'Database unavailable' } }
    expect(await violation()).toMatch(/answered 503: body at `\/` must have required property 'code'/)
  })

  it('an unknown path is a 404 NOT_FOUND and a known path with another method a 405 with Allow; anything else fails', async () => {
    expect((await app.request('/nowhere')).status).toBe(404)
    expect(await violation('/things/t1', { method: 'DELETE' })).toContain('DELETE /things/t1 (a documented path, not this method) answered 404')
  })

  it('a run of trailing slashes may read as the list or as an empty parameter: 404 NOT_FOUND passes there, not on the list itself', async () => {
    const notFound = () => Response.json({ error: 'Not found', code: 'NOT_FOUND' }, { status: 404 })
    await expect(contract.check(new Request('http://x/things//'), notFound())).resolves.toBeUndefined()
    await expect(contract.check(new Request('http://x/things'), notFound())).rejects.toThrow('(listThings) answered 404: an undocumented status')
    await expect(contract.check(new Request('http://x/things//'), Response.json({ things: [] }))).resolves.toBeUndefined()
  })
})
