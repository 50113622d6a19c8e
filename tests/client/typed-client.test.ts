// The typed clients: routes and bodies are checked by the compiler (`npm run typecheck` compiles this file, so
// each `@ts-expect-error` fails the build if the mistake under it ever compiles), and they work at run time.
import { describe, expect, expectTypeOf, it } from 'vitest'
import { createBackendClient, createWebClient } from '../../lib/client'
import { backendClient, webClient } from '../support/client'
import { useHarness } from '../support/harness'

const h = useHarness()

// Never called: only compiled.
function compileOnly() {
  const web = createWebClient('https://app.example.com')
  const backend = createBackendClient('https://backend.example.com')
  // @ts-expect-error a misspelt field in the body
  void web.api.keys.$post({ json: { nmae: 'ci' } })
  // @ts-expect-error a body of the wrong type
  void web.api.keys.$post({ json: { name: 42 } })
  // @ts-expect-error a route that does not exist
  void web.api.kyes.$get()
  // @ts-expect-error a method the route does not take
  void web.api.keys[':id'].$post({ param: { id: 'k' } })
  // @ts-expect-error a missing path parameter
  void web.api.keys[':id'].$get({})
  // @ts-expect-error an action the transition does not know
  void web.api.devices.$post({ json: { deviceId: 'd', action: 'explode' } })
  // @ts-expect-error web routes are not on the backend client
  void backend.api.keys.$get()
}
void compileOnly

describe('typed client', () => {
  it('types the documented responses per status', () => {
    type Created = Awaited<ReturnType<ReturnType<typeof createWebClient>['api']['keys']['$post']>>
    type Body201 = Awaited<ReturnType<Extract<Created, { status: 201 }>['json']>>
    expectTypeOf<Body201>().toEqualTypeOf<{ id: string; name: string; key: string; prefix: string; createdAt: string }>()
    type Failed = Awaited<ReturnType<Extract<Created, { status: 400 }>['json']>>
    expectTypeOf<Failed>().toHaveProperty('code')
  })

  it('the web client reaches the web app: create, then read back, a key', async () => {
    const client = webClient(h, h.users.alice)
    const created = await client.api.keys.$post({ json: { name: 'typed' } })
    expect(created.status).toBe(201)
    if (created.status !== 201) return
    const key = await created.json()
    const got = await client.api.keys[':id'].$get({ param: { id: key.id } })
    expect(got.status).toBe(200)
    expect(await got.json()).toMatchObject({ id: key.id, name: 'typed', prefix: key.prefix })
  })

  it('an error answer is typed as {error, code}', async () => {
    const res = await webClient(h).api.keys.$get() // no session
    expect(res.status).toBe(401)
    if (res.status !== 401) return
    expect(await res.json()).toMatchObject({ code: expect.any(String), error: expect.any(String) })
  })

  it('the backend client reaches the backend app', async () => {
    const res = await backendClient(h).health.$get()
    expect(res.status).toBe(200)
    expect((await res.json()).status).toBe('ok')
  })
})
