import { createRouter } from '../../lib/app'
import { actionHook } from '../../lib/http/validation'
import * as action from './routes/action'
import * as address from './routes/address'
import * as cdpImport from './routes/cdp-import'
import * as cdpStatus from './routes/cdp-status'
import * as create from './routes/create'
import * as topUp from './routes/top-up'
import * as topUps from './routes/top-ups'
import * as wallet from './routes/wallet'

/** Wallets: balances by address (public), the caller's managed (CDP) wallet, card top-ups and the prepaid balances they fund. Not `/api/wallet/sessions` (payments). */
export const app = createRouter()
  .openapi(wallet.route, wallet.handler)
  .openapi(action.route, action.handler, actionHook)
  .openapi(address.route, address.handler)
  .openapi(create.route, create.handler)
  .openapi(cdpStatus.route, cdpStatus.handler)
  .openapi(cdpImport.route, cdpImport.handler)
  .openapi(topUp.route, topUp.handler)
  .openapi(topUps.route, topUps.handler)
