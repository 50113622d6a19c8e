import { beforeAll, describe, expect, it } from 'vitest'
import { createPlatformApp, createRouter } from '../../lib/app'
import { bearerToken, requireAuth, requireSharedKey, sameSecret } from '../../lib/auth/shared-key'
import { useHarness } from '../support/harness'
import { withConfig } from './helpers'

const KEY = 'internal-key-0123456789'

const router = () => {
  const r = createRouter()
  r.get('/core', requireSharedKey, (c) => c.json({ ok: true }))
  r.get('/guard', requireAuth, (c) => c.json({ ok: true }))
  return r
}
let app: ReturnType<typeof createPlatformApp>
let unset: ReturnType<typeof createPlatformApp>

const h = useHarness({ env: { INTERNAL_API_KEY: KEY } })
beforeAll(async () => {
  app = createPlatformApp(() => h.services).route('/', router())
  unset = createPlatformApp(() => withConfig(h.services, { INTERNAL_API_KEY: undefined })).route('/', router())
})

const get = (a: typeof app, path: string, authorization?: string) =>
  a.request(path, authorization === undefined ? {} : { headers: { authorization } })

describe('shared key: requireSharedKey and requireAuth', () => {
  for (const path of ['/core', '/guard']) {
    it(`${path}: the right key passes`, async () => {
      const res = await get(app, path, `Bearer ${KEY}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ ok: true })
    })

    it(`${path}: no Authorization header is 401 Unauthorized`, async () => {
      const res = await get(app, path)
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    })

    it(`${path}: not a Bearer token is 401 (Basic, bare key, empty token)`, async () => {
      for (const value of [`Basic ${btoa(`x:${KEY}`)}`, KEY, 'Bearer', 'Bearer ', `Token ${KEY}`, '']) {
        const res = await get(app, path, value)
        expect(res.status, value).toBe(401)
        expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
      }
    })

    it(`${path}: a wrong key is 403 Forbidden (prefix, longer, other case, very long)`, async () => {
      for (const value of ['wrong', KEY.slice(0, -1), `${KEY}x`, KEY.toUpperCase(), 'x'.repeat(1000)]) {
        const res = await get(app, path, `Bearer ${value}`)
        expect(res.status, value).toBe(403)
        expect(await res.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' })
      }
    })

    it(`${path}: INTERNAL_API_KEY unset is 500 Server misconfigured, whatever is sent`, async () => {
      for (const value of [undefined, `Bearer ${KEY}`, 'Bearer anything']) {
        const res = await get(unset, path, value)
        expect(res.status).toBe(500)
        expect(await res.json()).toEqual({ error: 'Server misconfigured', code: 'MISCONFIGURED' })
      }
    })
  }

  it('the same middleware under both names', () => {
    expect(requireAuth).toBe(requireSharedKey)
  })
})

describe('shared key: helpers', () => {
  it('bearerToken reads the scheme case-insensitively and rejects anything else', () => {
    expect(bearerToken('Bearer abc')).toBe('abc')
    expect(bearerToken('bearer abc')).toBe('abc')
    expect(bearerToken('BEARER  abc ')).toBe('abc')
    for (const v of [undefined, '', 'Bearer', 'Bearer ', 'Bearer a b', 'Basic abc', 'abc', ' Bearer abc']) expect(bearerToken(v), String(v)).toBeNull()
  })

  it('sameSecret is exact', async () => {
    expect(await sameSecret('abc', 'abc')).toBe(true)
    expect(await sameSecret('abc', 'abd')).toBe(false)
    expect(await sameSecret('abc', 'abcd')).toBe(false)
    expect(await sameSecret('', 'abc')).toBe(false)
  })
})
