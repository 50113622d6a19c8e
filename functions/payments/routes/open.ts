import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { Address } from 'viem'
import { walletProofDoc } from '../../../lib/auth/wallet-proof'
import { requireWalletProof } from '../../../lib/auth/wallet-signature'
import type { AppEnv } from '../../../lib/context'
import { noStore } from '../../../lib/http/no-store'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { paymentSettings } from '../config'
import { openSession, sessionOpenedBy } from '../../../lib/payments/sessions'
import { SESSION_PAYMENT_DOC } from '../../../lib/payments/session-charge'
import { chainDown, DEPOSIT_REFUSALS, verifyDeposit } from '../deposit'
import { OpenSessionBody, PaymentSessionSchema, sessionJson } from '../schemas'

const refusals = Object.entries(DEPOSIT_REFUSALS)
  .map(([reason, error]) => `\`${reason}\` (${error})`)
  .join(', ')

export const route = createRoute(limitedRoute(limits.paymentSessionOpen, {
  method: 'post',
  path: '/api/wallet/sessions',
  operationId: 'openPaymentSession',
  security: [],
  middleware: [noStore] as const,
  tags: ['Payment sessions'],
  summary: 'Open a payment session with an on-chain deposit',
  description: [
    'No sign-in: the wallet is the account. Transfer the payment token (USDC on Base, chain 8453, unless configured ',
    'otherwise) from `walletAddress` to the platform’s payment recipient with a plain ERC-20 `transfer`, wait for ',
    'it to be mined, then post `{walletAddress, txHash, message, signature}`. ',
    walletProofDoc('paymentSession', 'walletAddress'),
    ' The session’s funds go to the wallet that proves itself here, so only the payer opens what it paid for.\n\n',
    'The transaction is read on chain: it must have succeeded ',
    'and hold a transfer of the payment token from that wallet to the recipient (the largest one counts as the ',
    'deposit). A direct `transfer` on the token that carries anything after its two arguments (an MPP payment’s memo) is ',
    'refused (`memo_bound`): it pays the gateway call its memo names, which must stay payable by its payer. A transfer ',
    'made through a smart wallet (the token called by the wallet, not by the transaction) has no memo to read and is ',
    'accepted. A transaction opens one session, ever: posting it again, even at the same moment, is 409 ',
    '`DEPOSIT_USED`, and so is a transaction that already paid a gateway call. When the transaction opened a session ',
    'of `walletAddress`, the 409 carries its `sessionId` (so a payer whose first answer was lost still finds its ',
    'session; using it still takes the wallet’s signature).\n\n',
    'Amounts are USD as decimal strings (1 token = 1 USD; `tokenDecimals` converts to the base units vouchers use). ',
    'The session is then spent by the gateway (`POST /api/v1/gateway`, `X-Payment-Method: session`), call by call, ',
    'against vouchers the wallet signs. ',
    SESSION_PAYMENT_DOC,
    '\n\nA deposit that does not verify is 402 `DEPOSIT_INVALID` with `reason`: ',
    refusals,
    '. Not cached. The rate limit counts requests that passed validation.',
  ].join(''),
  request: { body: jsonBody(OpenSessionBody) },
  responses: {
    201: ok(PaymentSessionSchema, 'The session, funded with the deposit'),
    400: errorResponse('Body fields invalid (`VALIDATION`); the proof\'s message malformed or of another purpose (`MESSAGE_MALFORMED`)'),
    401: errorResponse('The wallet proof is missing (`SIGNATURE_REQUIRED`) or refused (`NONCE_INVALID`, `DOMAIN_MISMATCH`, `URI_MISMATCH`, `CHAIN_MISMATCH`, `ADDRESS_MISMATCH`, `MESSAGE_EXPIRED`, `MESSAGE_NOT_YET_VALID`, `SIGNATURE_INVALID`)'),
    402: errorResponse('The deposit does not verify on chain (`DEPOSIT_INVALID`, with `reason`)'),
    409: errorResponse('The transaction already opened a session or paid for something else (`DEPOSIT_USED`); `sessionId` when it opened one of this wallet'),
    503: errorResponse('The chain RPC did not answer, or serves another chain (`CHAIN_UNAVAILABLE`), also when a smart wallet\'s proof cannot be checked; or payments are not configured: no `PAYMENT_RECIPIENT` (`NOT_CONFIGURED`)'),
  },
}, 'handler'))

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  const settings = paymentSettings(c.var.services.config)
  if (!settings) throw new ApiError('NOT_CONFIGURED', 'Payment sessions not configured')
  await enforceRateLimit(c, limits.paymentSessionOpen) // after validation, before any RPC call
  // The wallet proves itself before its deposit is read: the session's funds are granted to it.
  await requireWalletProof(c, body.walletAddress, body, 'paymentSession', chainDown)
  const deposit = await verifyDeposit(c, settings, { txHash: body.txHash, wallet: body.walletAddress as Address })
  const session = await openSession(c.var.services.db, deposit)
  if (!session) {
    // Not a secret: spending needs the wallet's signature, and the hash and wallet are public on chain.
    const opened = await sessionOpenedBy(c.var.services.reader, deposit.txHash, deposit.payer)
    throw new ApiError('DEPOSIT_USED', { ...(opened && { extra: { sessionId: opened.id } }) })
  }
  log.info('payment_session.opened', { requestId: c.var.requestId, sessionId: session.id, amount: deposit.amount })
  return c.json(sessionJson(session, settings), 201)
}
