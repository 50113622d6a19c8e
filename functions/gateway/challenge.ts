import type { Context } from 'hono'
import type { AppEnv, SessionUser } from '../../lib/context'
import { checkoutUrl } from './card'
import { ApiError } from '../../lib/http/errors'
import { issueChallenge } from './mpp'
import type { Plugin } from './plugins'

/**
 * 402 `payment_required` for one call of `plugin`, `message` saying why: the body carries a fresh MPP challenge
 * (`mpp`) and the card alternative (`stripe`: `checkoutUrl`, the price in USD), the header `WWW-Authenticate:
 * Payment …` (when MPP is configured). `paid`: the caller has a paid plan (its allowance is what ran out).
 */
export async function paymentRequired(c: Context<AppEnv>, plugin: Plugin, caller: SessionUser | null, message: string, paid = false): Promise<never> {
  const { services } = c.var
  const mpp = await issueChallenge(services, plugin, new URL(c.req.url).host)
  const url = checkoutUrl(services.config, caller, paid, plugin)
  throw new ApiError('PAYMENT_REQUIRED', {
    message,
    extra: { mpp: mpp.offer, stripe: { checkoutUrl: url, amount: plugin.price, currency: 'usd' } },
    ...(mpp.header && { headers: { 'WWW-Authenticate': mpp.header } }),
  })
}
