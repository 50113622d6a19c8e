import { errorResponse } from '../../lib/http/openapi'

/**
 * What the three routes that create a managed wallet (`POST /api/wallet` `create`, `POST /api/wallet/create`,
 * `POST /api/wallet/cdp`) share in their OpenAPI description: one text for the rules, one set of answers.
 */
export const CREATION_RULES =
  'One managed wallet per user, enforced in the database: concurrent creates make one CDP account and store one ' +
  'wallet; the others answer 400 `WALLET_EXISTS`. A retry after a lost answer makes no second account (the CDP ' +
  'account name, `u-` and 32 hex digits, and the create’s `X-Idempotency-Key` are derived from your user id; an ' +
  'account CDP already holds under your name is read back and stored). Without the CDP API key: 500 `CDP not ' +
  'configured`. CDP gets 8 s per call: down, slow or refusing, the answer is 503 `WALLET_PROVIDER_UNAVAILABLE` with ' +
  '`Retry-After`, and nothing is stored.'

/** The failure answers of a wallet creation beyond the route's own 400s. */
export const CREATE_RESPONSES = {
  500: errorResponse('`CDP not configured` (`MISCONFIGURED`): no CDP API key on this deployment'),
  503: errorResponse(
    '`Wallet provider unavailable` or `Wallet provider refused the request` (`WALLET_PROVIDER_UNAVAILABLE`, with ' +
      '`Retry-After`): CDP did not answer in 8 s, failed or refused; `CDP wallet secret not configured` or `CDP ' +
      'credentials are not usable` (`NOT_CONFIGURED`): the Wallet Secret is missing, or a CDP credential does not import',
  ),
}
