import { z } from '@hono/zod-openapi'
import { ERROR_CODES } from '../../lib/http/errors'
import { PAYMENT_METHODS } from './payment'
import { PLUGIN_IDS } from './plugins'

export const GatewayHeaders = z.object({
  'x-plugin-id': z
    .string()
    .max(1024)
    .optional()
    .openapi({ description: `The plugin (${PLUGIN_IDS.map((p) => `\`${p}\``).join(', ')}); overrides the body's \`plugin\`` }),
  'x-payment-method': z
    .enum(PAYMENT_METHODS, { error: 'X-Payment-Method must be one of stripe, mpp, session' })
    .optional()
    .openapi({ description: 'Default: `mpp` when `Authorization: Payment …` is sent, else `stripe`' }),
  'x-session-id': z.string().max(1024).optional().openapi({ description: 'Payment session id (method `session`)' }),
  'x-wallet-address': z.string().max(1024).optional().openapi({ description: '0x-prefixed wallet owning the payment session (method `session`)' }),
})

export const GatewayBody = z
  .object(
    {
      plugin: z
        .string({ error: 'plugin must be a string' })
        .max(1024)
        .optional()
        .openapi({ description: 'The plugin when `X-Plugin-Id` is absent; default `agent`. Not forwarded.' }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .catchall(z.unknown())
  .openapi('GatewayCall', { description: 'Every field but `plugin` is forwarded to the plugin as JSON, unchanged.' })

/** The plugin's JSON answer, relayed as it came (other content types are relayed too: see the operation). */
export const PluginAnswerSchema = z
  .record(z.string().max(1024), z.unknown())
  .openapi('PluginAnswer', { description: 'The plugin’s own answer, unchanged' })

const usd = z.string().max(16).openapi({ description: 'US dollars, a decimal string', example: '0.01' })

export const MppOfferSchema = z
  .object({
    scheme: z.literal('Payment').openapi({ description: 'The `Authorization` scheme that carries the credential' }),
    amount: usd,
    currency: z.string().max(16).openapi({ description: 'The payment token’s symbol (`PAYMENT_CURRENCY`, USDC)' }),
    recipient: z.string().max(42).nullable().openapi({ description: 'The address to pay; null when MPP is not configured' }),
    description: z.string().max(512).openapi({ description: 'What the payment buys, or that MPP is not configured' }),
    nonce: z.string().max(64).nullable().openapi({ description: '32 bytes, hex: single use, for this plugin and price (also inside `request`)' }),
    expiresAt: z.string().max(64).nullable().openapi({ format: 'date-time', description: '5 minutes after the challenge; the credential echoes it as `expires`' }),
    id: z
      .string()
      .max(64)
      .nullable()
      .openapi({ description: 'The challenge id, 32 bytes hex: an HMAC of `request` and `expiresAt`. The memo is `keccak256(id ‖ secret)`' }),
    request: z
      .string()
      .max(4096)
      .nullable()
      .openapi({ description: 'base64url JSON of the terms (amount in base units, token, recipient, chain, plugin, nonce), as in `WWW-Authenticate`; echo it unchanged' }),
    token: z.string().max(42).nullable().openapi({ description: 'The payment token’s contract address' }),
    chainId: z.literal(8453).openapi({ description: 'Base' }),
  })
  .openapi('MppOffer')

/** Every 402: `payment_required` with the challenge (`mpp`, `stripe`), or a payment session's refusal (`session`). */
export const PaymentRequiredSchema = z
  .object({
    error: z.enum(['payment_required', 'session_required', 'session_invalid', 'insufficient_balance', 'voucher_failed']),
    code: z.enum(ERROR_CODES).openapi({ description: 'The `error` in upper case (`PAYMENT_REQUIRED`, ...)' }),
    message: z.string().max(1024).openapi({ description: 'Why: no payment, the credential’s refusal, no paid plan, a spent allowance, the session’s refusal' }),
    mpp: MppOfferSchema.optional().openapi({ description: 'With `payment_required`: a fresh challenge' }),
    stripe: z
      .object({
        checkoutUrl: z
          .string()
          .max(2048)
          .nullable()
          .openapi({ description: 'Signed in: a Stripe Checkout for the smallest credit pack; anonymous: `{base_url}/pricing?plugin=<id>`; null without Stripe' }),
        amount: usd,
        currency: z.literal('usd'),
      })
      .optional()
      .openapi({ description: 'With `payment_required`: the card alternative, at the plugin’s price' }),
    session: z
      .object({ remaining: usd, cost: usd })
      .optional()
      .openapi({ description: 'With `insufficient_balance`: the session’s balance and the call’s price' }),
  })
  .openapi('PaymentRequired')

export const GatewayErrorSchema = z
  .object({
    error: z.string().max(64).openapi({ description: 'The gateway’s code (`unknown_plugin`, `no_plugin`, `internal`, ...), or `Unauthorized`' }),
    code: z.enum(ERROR_CODES),
    message: z.string().max(1024).optional().openapi({ description: 'What went wrong, in words' }),
  })
  .openapi('GatewayError')
