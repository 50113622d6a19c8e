import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/context'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { AddressField, TokenGateResultSchema } from '../schemas'
import { checkHolding, requireGate } from '../token-gate'

const description =
  'ERC-20 `balanceOf(address)` of TOKEN_GATE_CONTRACT on chain 8453 (BASE_RPC_URL) against ' +
  'TOKEN_GATE_MIN_BALANCE, a number in token units scaled by the token\'s `decimals()` (default 1 token); ' +
  'reaching the minimum exactly grants access. `rpcEndpoint` is the RPC URL\'s origin only, so a key in it ' +
  'is never shown. POST and GET give the same answer.'
const responses = {
  200: ok(TokenGateResultSchema),
  400: errorResponse('Invalid address'),
  502: errorResponse('Chain unavailable'),
  503: errorResponse('Token gating not configured'),
}

export const postRoute = createRoute({
  method: 'post',
  path: '/api/token-gating',
  operationId: 'checkTokenGate',
  security: [],
  tags: ['Token gating'],
  summary: 'Does a wallet hold the gating token?',
  description,
  request: { body: jsonBody(z.object({ address: AddressField }).openapi('TokenGatingRequest')) },
  responses,
})

export const getRoute = createRoute({
  method: 'get',
  path: '/api/token-gating',
  operationId: 'getTokenGate',
  security: [],
  tags: ['Token gating'],
  summary: 'Does a wallet hold the gating token?',
  description,
  request: { query: z.object({ address: AddressField }) },
  responses,
})

export const postHandler: RouteHandler<typeof postRoute, AppEnv> = async (c) =>
  c.json(await checkHolding(requireGate(c.var.services.config), c.req.valid('json').address, c.var.requestId), 200)

export const getHandler: RouteHandler<typeof getRoute, AppEnv> = async (c) =>
  c.json(await checkHolding(requireGate(c.var.services.config), c.req.valid('query').address, c.var.requestId), 200)
