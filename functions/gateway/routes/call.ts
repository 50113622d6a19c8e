import { createRoute, type RouteHandler, z } from '@hono/zod-openapi'
import type { StatusCode } from 'hono/utils/http-status'
import type { AppEnv } from '../../../lib/context'
import { optionalCaller } from '../card'
import { CHALLENGE_TTL_MS } from '../mpp'
import { isFree, paymentMethodOf, presentsPayment, takePayment, type Payment } from '../payment'
import { DEFAULT_PLUGIN, DEFAULT_PLUGINS, isPluginId, PLUGIN_IDS, pluginsFor } from '../plugins'
import { callPlugin, MAX_PLUGIN_ANSWER_BYTES, pluginUnavailable, type PluginAnswer } from '../proxy'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { errorFields, log } from '../../../lib/log'
import { jsonBody } from '../../../lib/http/validation'
import { GatewayBody, GatewayErrorSchema, GatewayHeaders, PaymentRequiredSchema, PluginAnswerSchema } from '../schemas'

const gatewayErrorResponse = (description: string) => ({ description, content: { 'application/json': { schema: GatewayErrorSchema } } })
const header = (description: string) => ({ description, schema: { type: 'string' as const, maxLength: 256 } })
const RELAYED_HEADER = header('`relayed`: the status and body are the plugin’s own; absent on the gateway’s own answers (its errors and payment challenges)')
/** A plugin's answer that is not JSON or an event stream (audio, text, ...): its bytes, with its content type. */
const anyBytes = { schema: { type: 'string' as const, format: 'binary', maxLength: MAX_PLUGIN_ANSWER_BYTES, description: 'The plugin’s bytes, with its content type' } }

const prices = PLUGIN_IDS.map((id) => `\`${id}\` ${DEFAULT_PLUGINS[id].price}${DEFAULT_PLUGINS[id].streaming ? ' (streaming)' : ''}`).join(', ')

export const route = createRoute(
  limitedRoute(
    limits.gateway,
    {
      method: 'post',
      path: '/api/v1/gateway',
      operationId: 'callPlugin',
      tags: ['Gateway'],
      summary: 'Call a paid plugin: pay by card plan, MPP credential or payment session; the plugin’s answer is relayed',
      description: [
        `**Plugins** (\`X-Plugin-Id\`, else the body's \`plugin\`, else \`agent\`) and their default USD price per call: ${prices}. ` +
          'The operator sets each one’s upstream URL, price and `auth` in `GATEWAY_PLUGINS` (JSON over these defaults); a price of `0` is free. ' +
          'A plugin with no upstream answers 502 `no_plugin` before any payment is asked for. The rate limit counts every call naming a known plugin.',
        '**Payment method**: `X-Payment-Method` (`stripe`, `mpp`, `session`; anything else is 400), else `mpp` when `Authorization: Payment …` is sent, else `stripe`.',
        '- `stripe` (card): a signed-in caller (session cookie, optional; it counts only from a dashboard `Origin` or none, so a foreign page cannot spend it) ' +
          'with a paid plan or the trial (admins: the `network` allowance) pays from the daily usage allowance: one unit per started US cent of the price, at least one; once today\'s allowance is spent, ' +
          'from credits (1 credit = 100 units). Anyone else, or a spent allowance with no credits left, gets 402 `payment_required`.',
        '- `mpp`: the 402 carries a challenge: `mpp.nonce` (32 random bytes, hex, single use, for this plugin and price, valid ' +
          `${CHALLENGE_TTL_MS / 60_000} minutes) and \`WWW-Authenticate: Payment amount, currency, recipient, nonce\` plus the mppx parameters ` +
          '(`id`, `realm`, `method="evm"`, `intent="charge"`, `request`, `expires`; the body’s `mpp` has `id`, `request` and `expiresAt` too). `id` is an HMAC of `request` ' +
          '(the amount in base units, token, recipient, chain, plugin and nonce, base64url JSON) and `expires`: a credential that changes any of them is refused. ' +
          'Pick a secret of your own (32 random bytes), pay `amount` of the token (`mpp.token`, chain 8453) to `recipient` with one direct ' +
          '`transfer(recipient, amount)` call whose calldata ends with the 32 bytes `keccak256(id ‖ secret)`, then repeat the call with `Authorization: Payment <credential>`, ' +
          'the credential being base64url JSON `{challenge: {id, request, expires, ...}, payload: {type: "hash", hash: <tx hash>, secret: <0x secret>}}` (mppx’s encoding; ' +
          'the other echoed parameters are ignored). **Why a secret**: a broadcast transaction is public, so its hash and memo prove only that someone paid; the memo commits ' +
          'to a secret only the payer’s credential reveals, so whoever copies the transaction from the chain cannot present it (a signature over the challenge would bind ' +
          'the payer too, but needs a wallet signature and a contract-wallet check; the commitment costs one hash and no chain call). The secret must be the payer’s: ' +
          'the server never chooses it, since a challenge is given to anyone who asks. A transfer pays one purpose: one without the memo (a payment session’s ' +
          'deposit, a radio fee) never pays a call, and one with a memo is refused as a deposit or radio fee (`memo_bound`), so it stays payable here. The transfer is verified on chain and its hash ' +
          'recorded once; the answer carries `Payment-Receipt: <tx hash>`. A challenge pays only for its own plugin, at a price no lower than the plugin’s current one. ' +
          'A refused credential (malformed, an `id` that is not the HMAC of its fields, another plugin’s or a cheaper challenge, unknown, expired or used nonce, ' +
          'not mined, reverted, wrong token or recipient, underpaid, no memo or another one, hash already used) is 402 with why and a fresh challenge, and uses nothing ' +
          'up: its nonce stays valid until it expires. Without `PAYMENT_RECIPIENT` or `SESSION_SECRET` the 402’s `mpp` says MPP is not configured (null `recipient`, `nonce`, `id`) ' +
          'and credentials are refused. Every 402 is `Cache-Control: no-store`.',
        '- `session`: `X-Session-Id` and `X-Wallet-Address` name a payment session, debited by the price against a signed voucher; ' +
          'the answer carries `Payment-Receipt: session:<id>:<nonce>` and `X-Session-Remaining`.',
        '**Authentication**: none by default. A plugin with `auth: true` needs a session, or the chosen method’s payment proof (MPP credential, session headers); ' +
          'a free one needs a session. Otherwise 401 `Unauthorized`.',
        '**Relay**: the body minus `plugin` is POSTed as JSON to the upstream with the caller’s `Accept` and nothing else of the request (no cookies, no `Authorization`). ' +
          'The answer keeps the upstream’s status and content type, and carries `X-Plugin-Answer: relayed`, which the gateway’s own answers (its errors, its payment ' +
          'challenges) never do: a plugin’s own 402 or 502 is told from the gateway’s by it. An event stream is relayed as it arrives and ends when the upstream sends nothing for the timeout; ' +
          `any other answer is read whole (at most ${MAX_PLUGIN_ANSWER_BYTES / 1024 / 1024} MB). The upstream must answer within \`GATEWAY_UPSTREAM_TIMEOUT_MS\` (default 30 s), ` +
          'else 502 `no_plugin`; redirects are not followed (502).',
        '**Refunds**: when the plugin fails (no answer in time, unreachable, a broken or oversized answer, or a 5xx, which is relayed as is) the call is given back: the ' +
          'allowance’s units, the session’s debit, or the MPP payment, whose record is removed and whose nonce is put back (valid at least one more minute), so the same ' +
          'credential can be presented again. An event stream that has started is paid for.',
      ].join('\n\n'),
      security: [{}, { session: [] }, { payment: [] }],
      request: { headers: GatewayHeaders, body: jsonBody(GatewayBody) },
      responses: {
        200: {
          description: 'The plugin’s answer: its status (2xx, or a 4xx/5xx it chose), content type and body (JSON, an event stream, audio, ...)',
          headers: {
            'x-plugin-id': header('The plugin that answered'),
            'X-Plugin-Answer': RELAYED_HEADER,
            'Payment-Receipt': header('MPP: the transaction hash; session: `session:<sessionId>:<nonce>`'),
            'X-Session-Remaining': header('Session method: the session’s USD balance after the debit'),
          },
          content: {
            'application/json': { schema: PluginAnswerSchema },
            'text/event-stream': { schema: { type: 'string', maxLength: 100_000_000, description: 'Server-sent events, relayed unchanged' } },
            '*/*': anyBytes,
          },
        },
        400: gatewayErrorResponse(
          '`unknown_plugin` (`UNKNOWN_PLUGIN`); `X-Payment-Method must be one of stripe, mpp, session`, `Request body must be a JSON object` (`VALIDATION`); `Invalid JSON body` (`INVALID_JSON`)',
        ),
        415: gatewayErrorResponse('A body sent without `Content-Type: application/json` (`UNSUPPORTED_MEDIA_TYPE`)'),
        401: gatewayErrorResponse('`Unauthorized` (`UNAUTHORIZED`): a plugin with `auth: true` called with no session and no payment proof'),
        402: {
          description:
            '`payment_required` (`PAYMENT_REQUIRED`) with `mpp`, `stripe` and `WWW-Authenticate: Payment …`; `session_required`, `session_invalid`, `insufficient_balance` (with `session`), `voucher_failed` (method `session`)',
          headers: {
            'WWW-Authenticate': header('`Payment amount="…", currency="…", recipient="…", nonce="…", id, realm, method, intent, request, expires` (when MPP is configured)'),
            'Cache-Control': header('`no-store`'),
          },
          content: { 'application/json': { schema: PaymentRequiredSchema } },
        },
        500: {
          description:
            '`internal` (`GATEWAY_INTERNAL`): an unexpected failure, or `GATEWAY_PLUGINS` is invalid; `message` says which. Or the plugin’s own 500, relayed as is (and refunded) with `X-Plugin-Answer: relayed`',
          content: { 'application/json': { schema: z.union([GatewayErrorSchema, PluginAnswerSchema]) }, '*/*': anyBytes },
          // A third party's answer, passed on unchanged: the one error answer that need not carry `code`.
          'x-relayed': true,
        },
        502: gatewayErrorResponse('`no_plugin` (`NO_PLUGIN`): no upstream configured, no answer within the timeout, unreachable, a redirect, or a broken or oversized answer'),
        503: gatewayErrorResponse('MPP: the chain did not answer, nothing was used (`CHAIN_UNAVAILABLE`, `Retry-After`); or a store is not configured (`NOT_CONFIGURED`)'),
        default: {
          description:
            'Any other status is the plugin’s own (a 204, a 4xx it chose, another 5xx), relayed with its content type and body; a 5xx is refunded. So is any answer ' +
            'with `X-Plugin-Answer: relayed`, whatever its status (a plugin’s own 402 or 502 is not the gateway’s error of that status)',
          headers: { 'X-Plugin-Answer': RELAYED_HEADER },
          content: { 'application/json': { schema: PluginAnswerSchema }, '*/*': anyBytes },
        },
      },
    },
    'handler',
  ),
)

const unknownPlugin = (id: string) => new ApiError('UNKNOWN_PLUGIN', `No plugin "${id.slice(0, 64)}": the plugins are ${PLUGIN_IDS.join(', ')}`)

/** Anything unexpected is the spec's 500 `internal`, in the gateway's shape. */
export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  try {
    return await serve(c)
  } catch (e) {
    if (e instanceof ApiError) throw e
    log.error('gateway.failed', errorFields(e))
    throw new ApiError('GATEWAY_INTERNAL', 'The call failed unexpectedly')
  }
}

async function serve(c: Parameters<typeof handler>[0]) {
  const { config } = c.var.services
  const headers = c.req.valid('header')
  const { plugin: bodyPlugin, ...payload } = c.req.valid('json')
  const id = headers['x-plugin-id'] ?? bodyPlugin ?? DEFAULT_PLUGIN
  if (!isPluginId(id)) throw unknownPlugin(id)
  // After the cheapest refusal (no store needed), before anything that costs: an upstream, a challenge, a chain read.
  await enforceRateLimit(c, limits.gateway)
  const plugin = pluginsFor(config)[id]
  c.header('x-plugin-id', plugin.id)
  const { url } = plugin
  if (!url) throw pluginUnavailable('no upstream is configured for it')

  const method = paymentMethodOf(headers['x-payment-method'], c.req.header('authorization'))
  const caller = await optionalCaller(c)
  const free = isFree(plugin)
  if (plugin.auth && !caller && (free || !presentsPayment(c, method))) {
    throw new ApiError('UNAUTHORIZED', { extra: { message: 'This plugin needs a session or a payment proof (MPP credential, payment session)' } })
  }
  const payment: Payment | null = free ? null : await takePayment(c, plugin, method, caller)

  let answer: PluginAnswer
  try {
    answer = await callPlugin({ ...plugin, url }, payload, { accept: c.req.header('accept'), timeoutMs: config.GATEWAY_UPSTREAM_TIMEOUT_MS })
  } catch (e) {
    // The upstream failed the call (refused, no answer in time, a redirect, a broken answer): named, never its URL.
    if (e instanceof ApiError && e.code === 'NO_PLUGIN') log.warn('gateway.upstream_unavailable', { dependency: 'plugin_upstream', pluginId: plugin.id, reason: e.extra?.message })
    await refund(payment, plugin.id)
    throw e
  }
  if (!answer.served) await refund(payment, plugin.id)
  else {
    if (payment?.receipt) c.header('Payment-Receipt', payment.receipt)
    if (payment?.remaining) c.header('X-Session-Remaining', payment.remaining)
  }
  log.info('gateway.call', { pluginId: plugin.id, method: free ? 'free' : method, status: answer.status, streamed: answer.streamed })
  // Marks the plugin's own answer: its status may be one the gateway answers with too (a 402, a 502).
  const out: Record<string, string> = { 'cache-control': answer.streamed ? 'no-cache' : 'no-store', 'x-plugin-answer': 'relayed' }
  if (answer.contentType) out['content-type'] = answer.contentType
  // Data's types lag behind what Response takes (a Uint8Array, a byte stream, null for a null-body status)
  return c.body(answer.body as null, answer.status as StatusCode, out) as never
}

/** Gives a failed call's payment back; a refund that fails is logged (the caller still gets the plugin's failure). */
async function refund(payment: Payment | null, pluginId: string) {
  if (!payment) return
  try {
    await payment.release()
    log.info('gateway.refunded', { pluginId })
  } catch (e) {
    log.error('gateway.refund_failed', { pluginId, ...errorFields(e) })
  }
}
