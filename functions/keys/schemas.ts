import { z } from '@hono/zod-openapi'

/** The most keys an account holds (spec: 429 when 10 keys exist). */
export const MAX_KEYS_PER_USER = 10

/** A key as listed: never the raw key, never a hash. */
export const ApiKeyItemSchema = z
  .object({
    id: z.string().max(255),
    name: z.string().max(256),
    prefix: z.string().max(1024).openapi({ description: 'The first 10 characters of the key (`sk_` + 7 hex), to recognise it by', example: 'sk_1a2b3c4' }),
    createdAt: z.string().max(64).openapi({ format: 'date-time' }),
    lastUsedAt: z.string().max(64).nullable().openapi({ format: 'date-time', description: 'Last successful validation; null if never used' }),
  })
  .openapi('ApiKey')

export const KeyIdParams = z.object({ id: z.string().max(255).openapi({ param: { name: 'id', in: 'path' }, description: 'The key id' }) })
