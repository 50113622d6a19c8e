import type { RouteHandler } from '@hono/zod-openapi'
import { desc, eq } from 'drizzle-orm'
import { formatUnits, getAddress } from 'viem'
import type { SignedInEnv } from '../../../lib/context'
import { readAsUser } from '../../../lib/db/rls'
import { limits } from '../../../lib/http/limits'
import { noStore } from '../../../lib/http/no-store'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { cardSessions } from '../../../lib/payments/sessions'
import { walletTopUps } from '../../../schema'
import { TopUpsSchema } from '../schemas'

export const route = signedInRoute(
  limitedRoute(limits.wallet, {
    method: 'get',
    path: '/api/wallet/top-ups',
    operationId: 'listWalletTopUps',
    middleware: [noStore] as const,
    tags: ['Wallet'],
    summary: 'Your card top-ups and the prepaid gateway balances they funded',
    description:
      'The top-ups you paid (`GET /api/wallet/top-up`, credited once Stripe reported them paid), newest first, and for ' +
      'each wallet among them its card-funded payment session: 1 USD per 100 cents paid, minus what gateway calls ' +
      'paid with its vouchers have taken. `GET /api/wallet/sessions/{id}` (with `X-Wallet-Address`) shows the same ' +
      'session with its `lastNonce`. A top-up still being paid is not listed. Not cached.',
    responses: {
      200: ok(TopUpsSchema),
      500: errorResponse('Internal server error'),
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  const me = c.var.user.id
  const rows = await readAsUser(c, (db) => db.select().from(walletTopUps).where(eq(walletTopUps.userId, me)).orderBy(desc(walletTopUps.createdAt)).limit(100))
  const sessions = await cardSessions(c.var.services.reader, [...new Set(rows.map((r) => r.sessionId))])
  const { PAYMENT_TOKEN_DECIMALS: decimals, PAYMENT_CURRENCY: currency } = c.var.services.config
  const usd = (n: bigint) => formatUnits(n, decimals)
  return c.json(
    {
      balances: sessions.map((s) => ({
        sessionId: s.id,
        address: getAddress(s.walletAddress),
        deposit: usd(BigInt(s.depositAmount)),
        spent: usd(BigInt(s.spentAmount)),
        remaining: usd(BigInt(s.depositAmount) - BigInt(s.spentAmount)),
        currency,
      })),
      topUps: rows.map((r) => ({ paymentId: r.paymentId, address: getAddress(r.walletAddress), amount: r.amountCents, sessionId: r.sessionId, createdAt: r.createdAt.toISOString() })),
    },
    200,
  )
}
