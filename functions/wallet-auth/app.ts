import { createRouter } from '../../lib/app'
import * as nonce from './routes/nonce'
import * as signIn from './routes/sign-in'

/** Sign-in with a wallet: a single-use nonce, then a signed message (Base SIWE or Tempo). */
export const app = createRouter()
  .openapi(nonce.route, nonce.handler)
  .openapi(nonce.postRoute, nonce.handler)
  .openapi(signIn.route, signIn.handler)
