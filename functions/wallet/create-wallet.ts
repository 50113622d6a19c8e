import type { AppContext } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { CDP_NOT_AVAILABLE, CDP_NOT_CONFIGURED, cdpSettings } from './cdp'

/**
 * What creating a managed wallet answers today (`POST /api/wallet` `create`, `POST /api/wallet/create`, `POST
 * /api/wallet/cdp`): 400 when the caller already has one, 500 without CDP, and 503 with CDP, since the CDP API calls
 * (create or import an account) are not built yet: refusing beats faking a wallet. Always throws.
 */
export function refuseManagedWalletCreation(c: AppContext, hasWallet: boolean): never {
  if (hasWallet) throw new ApiError('WALLET_EXISTS')
  if (!cdpSettings(c.var.services.config)) throw new ApiError('MISCONFIGURED', CDP_NOT_CONFIGURED)
  throw new ApiError('NOT_IMPLEMENTED', CDP_NOT_AVAILABLE)
}
