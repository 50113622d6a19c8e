import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { count, eq } from 'drizzle-orm'
import { generateApiKey, lookupPrefix, MAX_KEYS_PER_USER } from '../../../lib/auth/api-keys'
import { hashSecret } from '../../../lib/auth/password'
import { requireSession } from '../../../lib/auth/session'
import type { AppEnv } from '../../../lib/context'
import { sha256Hex } from '../../../lib/crypto'
import { asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { apiKeys, users } from '../../../schema'

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
    id: z.string(),
    name: z.string(),
    key: z.string().openapi({ description: 'The raw key (`sk_` + 64 hex). Shown only in this response; store it now.' }),
    prefix: z.string().openapi({ description: 'The first 10 characters of the key' }),
    createdAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('CreatedApiKey')

export const route = createRoute({
  method: 'post',
  path: '/api/keys',
  tags: ['API keys'],
  summary: 'Create an API key',
  description: `At most ${MAX_KEYS_PER_USER} keys per account, enforced in the database so concurrent creates cannot exceed it.`,
  middleware: [requireSession] as const,
  security: [{ session: [] }],
  request: { body: jsonBody(CreateKeyBody) },
  responses: {
    201: ok(CreatedKeySchema, 'Created; the raw key is in `key` and is never shown again'),
    400: errorResponse('Name missing, empty, not a string or longer than 64 characters (`VALIDATION`); or invalid JSON'),
    401: errorResponse('No session'),
    403: errorResponse('Foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
    429: errorResponse(`The account already has ${MAX_KEYS_PER_USER} keys (\`KEY_LIMIT\`)`),
    500: errorResponse('Internal server error'),
  },
})

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { name } = c.req.valid('json')
  const me = c.var.user!.id
  const key = generateApiKey()
  // bcrypt before the transaction: the row lock below is then held for a few milliseconds, not a hash.
  const keyHash = await hashSecret(key, c.var.services.config.PASSWORD_HASH_COST)
  const keySha256 = await sha256Hex(key)
  const row = await asUser(c, async (tx) => {
    // Locking the owner's row serialises this user's creates, so count-then-insert cannot overshoot.
    const [owner] = await tx.select({ id: users.id }).from(users).where(eq(users.id, me)).for('update')
    if (!owner) throw new ApiError(401, 'Unauthorized')
    const [{ n }] = await tx.select({ n: count() }).from(apiKeys).where(eq(apiKeys.userId, me))
    if (n >= MAX_KEYS_PER_USER) {
      throw new ApiError(429, `API key limit reached (${MAX_KEYS_PER_USER})`, { code: 'KEY_LIMIT' })
    }
    const [created] = await tx.insert(apiKeys).values({ userId: me, name, prefix: lookupPrefix(key), keyHash, keySha256 }).returning()
    return created
  })
  c.header('Cache-Control', 'no-store')
  return c.json({ id: row.id, name: row.name, key, prefix: row.prefix, createdAt: row.createdAt.toISOString() }, 201)
}
