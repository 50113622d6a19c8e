import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import { createPlatformApp, createRouter } from '../../../lib/app'
import { chargeSession } from '../../../lib/payments/session-charge'
import { paymentSessions, paymentSessionVouchers } from '../../../schema'
import type { Harness } from '../../support/harness'
import { freshIp } from '../../support/requests'

/** What every plugin call costs in these tests: a session of 0.10 is worth 10 calls. */
export const PRICE = '0.01'

/**
 * The gateway's side of a session payment, as a tiny app on the harness's services: `POST /charge` charges
 * `?price=` (default PRICE) through `chargeSession` with the request's own headers and answers 200 with the
 * receipt headers, or refunds and answers 502 with `?fail=1` (a plugin that could not serve the call).
 */
export function chargeApp(h: Harness) {
  const router = createRouter()
  router.post('/charge', async (c) => {
    const charge = await chargeSession(c, { pluginId: 'test-plugin', priceUsd: c.req.query('price') ?? PRICE })
    if (c.req.query('fail')) {
      await charge.refund()
      return c.json({ error: 'no_plugin' }, 502)
    }
    c.header('Payment-Receipt', charge.receipt)
    c.header('X-Session-Remaining', charge.remaining)
    return c.json({ ok: true }, 200)
  })
  return createPlatformApp(() => h.services).route('/', router)
}

export type ChargeApp = ReturnType<typeof chargeApp>

export const charge = (app: ChargeApp, headers: Record<string, string>, query = '') =>
  app.request(`/charge${query}`, { method: 'POST', headers })

/** A gateway refusal: its status, and the body `{error: <spec code>, code, message, ...}`. */
export async function expectGatewayError(res: Response, status: number, error: string) {
  const body = (await res.json()) as Record<string, unknown>
  expect(res.status, JSON.stringify(body)).toBe(status)
  expect(body).toMatchObject({ error, code: error.toUpperCase() })
  expect(typeof body.message).toBe('string')
  return body
}

/** The session's row and its vouchers, as stored. */
export async function stored(h: Harness, sessionId: string) {
  const [session] = await h.db.select().from(paymentSessions).where(eq(paymentSessions.id, sessionId))
  const vouchers = await h.db.select().from(paymentSessionVouchers).where(eq(paymentSessionVouchers.sessionId, sessionId))
  return { session, vouchers }
}

/** `GET /api/wallet/sessions/:id` as `wallet`. */
export const readSession = (h: Harness, sessionId: string, wallet: string) =>
  h.web.request(`/api/wallet/sessions/${sessionId}`, { headers: { 'x-wallet-address': wallet, 'cf-connecting-ip': freshIp() } })
