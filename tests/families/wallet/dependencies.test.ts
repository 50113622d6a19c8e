import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { userWallets } from '../../../schema'
import { startCdpServer } from '../../support/cdp-server'
import { startFaultProxy, underFault } from '../../support/fault-proxy'
import { useFixture, useHarness } from '../../support/harness'
import { leaksDetail, useLogLines } from '../../support/log-lines'
import { WALLET_CREATES as CREATES, expectError, walletCall, withConfig } from './helpers'

/** Each CDP call gives up after this long (`CDP_TIMEOUT_MS`): a CDP that never answers fails the request in time. */
const CDP_TIMEOUT_MS = 400
/** The bound on an answer while CDP is down: the call's deadline (a create may read the account back: two calls), and room for a loaded machine. */
const ANSWER_WITHIN_MS = 2 * CDP_TIMEOUT_MS + 1500
const FAULTS = ['refuse', 'blackhole'] as const


/**
 * CDP behind the fault proxy, refused (connections refused) and blackholed (accepted, never answered), README "When
 * a dependency fails": every route that creates a managed wallet answers 503 `WALLET_PROVIDER_UNAVAILABLE` with
 * `Retry-After` within `CDP_TIMEOUT_MS`, stores nothing, logs one `wallet.cdp_failed` line naming CDP (never its
 * host), and the same request creates the wallet once CDP is back.
 */
describe('managed wallets while CDP is down', () => {
  const cdp = useFixture(() => startCdpServer())
  const proxy = useFixture(() => startFaultProxy({ target: cdp.env.CDP_API_URL, mode: 'http', keepHost: true }))
  // The default deadline for the calls that succeed (a loaded machine), the short one while CDP is down.
  const h = useHarness(() => ({ env: { ...cdp.env, CDP_API_URL: proxy.url } }))
  const logs = useLogLines()
  const storedFor = (userId: string) => h.db.select().from(userWallets).where(eq(userWallets.userId, userId))

  for (const fault of FAULTS) {
    it.each(CREATES)(`%s while CDP is ${fault}d → 503 in time, nothing stored; then it creates the wallet`, async (_name, path, body) => {
      const user = await h.seedUser('Una', `una-${crypto.randomUUID()}@example.com`)
      const send = () => walletCall(h, 'POST', path, { user, body: body(user.email) })
      const { value: res, ms } = await underFault(proxy, fault, () => withConfig(h, { CDP_TIMEOUT_MS: String(CDP_TIMEOUT_MS) }, send))
      await expectError(res, 503, 'WALLET_PROVIDER_UNAVAILABLE', 'Wallet provider unavailable')
      expect(res.headers.get('retry-after')).toBe('30')
      expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
      expect(await storedFor(user.id)).toEqual([])
      const lines = logs.events('wallet.cdp_failed')
      expect(lines.length).toBeGreaterThanOrEqual(1)
      expect(lines[0]).toMatchObject({ level: 'error', dependency: 'cdp', status: 0 })
      expect(leaksDetail(lines[0])).toBe(false)

      const again = await send()
      expect(again.status, await again.clone().text()).toBe(201)
      expect(await storedFor(user.id)).toHaveLength(1)
    })
  }
})
