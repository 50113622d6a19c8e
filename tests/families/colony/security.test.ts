import { describe, expect, it } from 'vitest'
import { useFixture, useHarness } from '../../support/harness'
import { call } from '../../support/requests'
import { COLONY, startSoulHost } from '../../support/soul-host'

const soul = useFixture(() => startSoulHost({ '/colony': { body: COLONY } }))
const h = useHarness(() => ({ env: { SOUL_SERVICE_URL: soul.url } }))

describe('colony: security', () => {
  it('no session or a forged cookie is 401, and the soul host is not asked', async () => {
    const before = soul.seen.length
    const attempts: Record<string, string>[] = [{}, { cookie: 'service-session=forged' }]
    for (const headers of attempts) {
      const res = await call(h, 'GET', '/api/colony/status', { headers })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    }
    expect(soul.seen.length).toBe(before)
  })

  it('an oversized soul host answer is refused, not buffered', async () => {
    soul.replies['/colony'] = { raw: JSON.stringify({ agents: [], pad: 'x'.repeat(3 * 1024 * 1024) }) }
    const body = await (await call(h, 'GET', '/api/colony/status', { user: h.users.bob })).json()
    expect(body).toMatchObject({ degraded: true, detail: `${soul.url}: too large`, colony_size: 0 })
    soul.replies['/colony'] = { body: COLONY }
  })
})
