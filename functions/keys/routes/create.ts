import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { count, eq } from 'drizzle-orm'
import { generateApiKey, lookupPrefix } from '../../../lib/auth/api-keys'
import { hashSecret } from '../../../lib/auth/password'
import { sha256Hex } from '../../../lib/crypto'
import type { Db } from '../../../lib/db/rls'
import { asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { apiKeys, users } from '../../../schema'
import { MAX_KEYS_PER_USER } from '../schemas'

const CreateKeyBody = z
  .object(
    {
      name: z
        .string({ error: (iss) => (iss.input === undefined ? 'Name is required' : 'Name must be a string') })
        .trim()
        .min(1, 'Name is required')
        .max(64, 'Name must be at most 64 characters')
        .openapi({ example: 'CI deploys' }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('CreateApiKey')

const CreatedKeySchema = z
  .object({
    id: z.string().max(255),
    name: z.string().max(256),
    key: z.string().max(8192).openapi({ description: 'The raw key (`sk_` + 64 hex). Shown only in this response; store it now.' }),
    prefix: z.string().max(1024).openapi({ description: 'The first 10 characters of the key' }),
    createdAt: z.string().max(64).openapi({ format: 'date-time' }),
  })
  .openapi('CreatedApiKey')

export const route = signedInRoute(limitedRoute(limits.apiKeyCreate, {
  method: 'post',
  path: '/api/keys',
  operationId: 'createApiKey',
  tags: ['API keys'],
  summary: 'Create an API key',
  description:
    `At most ${MAX_KEYS_PER_USER} keys per account, enforced in the database so concurrent creates cannot exceed it. ` +
    'Every refusal (validation, the key limit) is decided before the key is hashed, so a refused create costs no ' +
    `bcrypt work. Rate limited to ${limits.apiKeyCreate.limit} creates per ${limits.apiKeyCreate.windowSec} s per user.`,
  request: { body: jsonBody(CreateKeyBody) },
  responses: {
    201: ok(CreatedKeySchema, 'Created; the raw key is in `key` and is never shown again'),
    400: errorResponse('Name missing, empty, not a string or longer than 64 characters (`VALIDATION`); or invalid JSON'),
    429: errorResponse(`The account already has ${MAX_KEYS_PER_USER} keys (\`KEY_LIMIT\`)`),
  },
}, 'handler'))

const keyLimit = () => new ApiError('KEY_LIMIT', `API key limit reached (${MAX_KEYS_PER_USER})`)
const countKeys = (tx: Db, userId: string) => tx.select({ n: count() }).from(apiKeys).where(eq(apiKeys.userId, userId)).then(([r]) => r.n)

export const handler: RouteHandler<typeof route> = async (c) => {
  const { name } = c.req.valid('json')
  const me = c.var.user.id
  // After validation, so a malformed request is refused without spending the user's budget.
  await enforceRateLimit(c, limits.apiKeyCreate)
  // The cheap refusal before the expensive hash: a user at the limit costs one count, not a bcrypt run.
  if ((await asUser(c, (tx) => countKeys(tx, me))) >= MAX_KEYS_PER_USER) throw keyLimit()
  const key = generateApiKey()
  // bcrypt before the transaction: the row lock below is then held for a few milliseconds, not a hash.
  const keyHash = await hashSecret(key, c.var.services.config.PASSWORD_HASH_COST)
  const keySha256 = await sha256Hex(key)
  const row = await asUser(c, async (tx) => {
    // Locking the owner's row serialises this user's creates, so count-then-insert cannot overshoot.
    const [owner] = await tx.select({ id: users.id }).from(users).where(eq(users.id, me)).for('update')
    if (!owner) throw new ApiError('UNAUTHORIZED')
    // The exact check: concurrent creates that all passed the pre-check are serialised here.
    if ((await countKeys(tx, me)) >= MAX_KEYS_PER_USER) throw keyLimit()
    const [created] = await tx.insert(apiKeys).values({ userId: me, name, prefix: lookupPrefix(key), keyHash, keySha256 }).returning()
    return created
  })
  return c.json({ id: row.id, name: row.name, key, prefix: row.prefix, createdAt: row.createdAt.toISOString() }, 201)
}
