import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPlatformApp, createRouter } from '../../lib/app'
import { generateApiKey } from '../../lib/auth/api-keys'
import { requireSessionOrApiKey } from '../../lib/auth/dual'
import { SESSION_COOKIE } from '../../lib/auth/session'
import { apiKeys } from '../../schema'
import { BROWSER, useHarness } from '../support/harness'
import { insertApiKey } from './helpers'
import { FORBIDDEN_ORIGIN } from '../support/requests'

let app: ReturnType<typeof createPlatformApp>
let aliceKey: { key: string; id: string }
let bobKey: { key: string; id: string }

const h = useHarness()
beforeAll(async () => {
  const r = createRouter()
  r.on(['GET', 'POST'], '/dual', requireSessionOrApiKey, (c) => c.json({ user: c.var.user, apiKeyId: c.var.apiKeyId ?? null }))
  app = createPlatformApp(() => h.services).route('/', r)
  aliceKey = await insertApiKey(h.db, h.users.alice.id)
  bobKey = await insertApiKey(h.db, h.users.bob.id)
})

const dual = (headers: Record<string, string>, method = 'GET') => app.request('/dual', { method, headers })
const expect401 = async (res: Response) => {
  expect(res.status).toBe(401)
  expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
}

describe('dual authentication: session cookie or user API key', () => {
  it('a session cookie authenticates; no apiKeyId', async () => {
    const { alice } = h.users
    const res = await dual({ cookie: alice.cookie })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ user: { id: alice.id, email: alice.email, name: 'Alice', isAdmin: false, expiresAt: expect.any(String) }, apiKeyId: null })
  })

  it('a bearer API key authenticates as its owner and sets apiKeyId', async () => {
    const { bob } = h.users
    const res = await dual({ authorization: `Bearer ${bobKey.key}` })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ user: { id: bob.id, email: bob.email, name: 'Bob', isAdmin: false }, apiKeyId: bobKey.id })
  })

  it("an admin's key carries isAdmin from ADMIN_EMAILS", async () => {
    const adminKey = await insertApiKey(h.db, h.users.admin.id)
    const body = await (await dual({ authorization: `Bearer ${adminKey.key}` })).json()
    expect(body.user.isAdmin).toBe(true)
  })

  it('neither is 401 Unauthorized', async () => {
    await expect401(await dual({}))
  })

  it('forged or malformed keys are 401', async () => {
    const forgedSamePrefix = aliceKey.key.slice(0, 10) + 'f'.repeat(aliceKey.key.length - 10)
    for (const value of [
      `Bearer ${generateApiKey()}`,
      `Bearer ${forgedSamePrefix}`,
      `Bearer ${aliceKey.key.toUpperCase()}`,
      `Bearer ${aliceKey.key.slice(0, -1)}`,
      `Basic ${aliceKey.key}`,
      aliceKey.key,
      'Bearer sk_',
    ]) {
      await expect401(await dual({ authorization: value }))
    }
  })

  it('a deleted key is 401', async () => {
    const k = await insertApiKey(h.db, h.users.alice.id, 'to delete')
    expect((await dual({ authorization: `Bearer ${k.key}` })).status).toBe(200)
    await h.db.delete(apiKeys).where(eq(apiKeys.id, k.id))
    await expect401(await dual({ authorization: `Bearer ${k.key}` }))
  })

  it("the session wins: alice's cookie with bob's key is alice, not via a key", async () => {
    const body = await (await dual({ cookie: h.users.alice.cookie, authorization: `Bearer ${bobKey.key}` })).json()
    expect(body.user.id).toBe(h.users.alice.id)
    expect(body.apiKeyId).toBeNull()
  })

  it('an invalid cookie falls through to the key', async () => {
    const body = await (await dual({ cookie: `${SESSION_COOKIE}=nope`, authorization: `Bearer ${bobKey.key}` })).json()
    expect(body.user.id).toBe(h.users.bob.id)
    expect(body.apiKeyId).toBe(bobKey.id)
  })

  it('the cookie path applies the trusted-origin check on unsafe methods; the key path needs none', async () => {
    const { alice } = h.users
    const foreign = await dual({ cookie: alice.cookie, origin: 'https://evil.example' }, 'POST')
    expect(foreign.status).toBe(403)
    expect(await foreign.json()).toEqual(FORBIDDEN_ORIGIN)
    expect((await dual({ cookie: alice.cookie, origin: BROWSER.origin }, 'POST')).status).toBe(200)
    expect((await dual({ authorization: `Bearer ${aliceKey.key}`, origin: 'https://evil.example' }, 'POST')).status).toBe(200)
  })
})
