import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { getAddress } from 'viem'
import { createTopUpCheckout, stripeClient, stripeErrorFields, TOP_UP_AMOUNTS, type TopUpAmount } from '../../../lib/billing/stripe'
import type { SignedInEnv } from '../../../lib/context'
import { readAsUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { log } from '../../../lib/log'
import { provenWalletQuery } from '../owned'
import { addressField, TopUpSchema } from '../schemas'

const NOT_PROVEN = 'address must be your managed wallet or a wallet you signed in with'
const INVALID_AMOUNT = `amount must be one of ${TOP_UP_AMOUNTS.join(', ')} (USD cents)`

const Query = z.object({
  amount: z
    .enum(TOP_UP_AMOUNTS.map(String) as [string, ...string[]], { error: INVALID_AMOUNT })
    .default('1000')
    .openapi({ description: 'USD cents', example: '1000' }),
  address: addressField('address').openapi({ description: 'The wallet on Base to top up (any case): your managed wallet or a wallet you signed in with' }),
})

export const route = signedInRoute(
  limitedRoute(limits.walletTopUp, {
    method: 'get',
    path: '/api/wallet/top-up',
    operationId: 'startWalletTopUp',
    tags: ['Wallet'],
    summary: 'Top up a wallet by card: a Stripe Checkout',
    description:
      'Creates a one-time Stripe Checkout (mode `payment`, USD) for `amount` cents with the wallet `address` and ' +
      'your user id in its metadata (`kind: wallet-top-up`), and answers JSON `{url, amount, address}` (not a ' +
      'redirect, so a script or the dashboard decides how to open it). After payment Stripe returns the browser to ' +
      '`{base_url}/dashboard/wallet?top_up=success`.\n\n' +
      '`address` must be a wallet you have proven: your managed wallet, or a wallet you signed in with (`POST /api/wallet-auth` ' +
      'linked it with a signature over a server-issued nonce); any other is 403 before Stripe is asked. Once Stripe reports ' +
      'the payment paid (webhook, or checkout verify), the wallet\'s **prepaid gateway balance** is credited, once per ' +
      'payment: its card-funded payment session (`source: card`, made on its first top-up, one per wallet) gains 1 USD per ' +
      '100 cents paid, and the gateway spends it call by call with the wallet\'s vouchers (`X-Payment-Method: session`). ' +
      '`GET /api/wallet/top-ups` lists your top-ups with that session\'s id and balance.',
    request: { query: Query },
    responses: {
      200: ok(TopUpSchema, 'The payment page'),
      400: errorResponse(`\`${INVALID_AMOUNT}\`, or \`address required\` / an invalid address (\`VALIDATION\`)`),
      403: errorResponse(`\`${NOT_PROVEN}\` (\`FORBIDDEN\`)`),
      500: errorResponse('`Payment provider unavailable` (`PAYMENT_PROVIDER_UNAVAILABLE`): Stripe refused or did not answer'),
      503: errorResponse('`Stripe not configured` (`NOT_CONFIGURED`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, SignedInEnv> = async (c) => {
  const query = c.req.valid('query')
  const amount = Number(query.amount) as TopUpAmount
  const address = getAddress(query.address)
  const { config } = c.var.services
  const stripe = stripeClient(config)
  if (!stripe) throw new ApiError('NOT_CONFIGURED', 'Stripe not configured')
  // The wallet is granted the payment's funds: only one the caller has proven.
  const [proven] = await readAsUser(c, (db) => provenWalletQuery(db, c.var.user.id, address))
  if (!proven) throw new ApiError('FORBIDDEN', NOT_PROVEN)
  try {
    const session = await createTopUpCheckout(stripe, config, { amount, address, userId: c.var.user.id, email: c.var.user.email })
    if (!session.url) throw new Error('Checkout Session without a url')
    return c.json({ url: session.url, amount, address }, 200)
  } catch (e) {
    log.error('wallet.top_up_checkout_failed', { requestId: c.var.requestId, ...stripeErrorFields(e) })
    throw new ApiError('PAYMENT_PROVIDER_UNAVAILABLE')
  }
}
