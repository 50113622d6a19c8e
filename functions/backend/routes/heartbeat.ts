import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq, sql } from 'drizzle-orm'
import type { Context } from 'hono'
import { isVerifiedAdminEmail } from '../admin'
import type { AppEnv } from '../../../lib/context'
import { withUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { ok } from '../../../lib/http/openapi'
import { installations } from '../../../schema'
import { identityOrKeyDocs, resolveCaller } from '../identity-or-key'
import { errorFields, log } from '../../../lib/log'
import { limits } from '../../../lib/http/limits'
import { limitedRoute } from '../../../lib/http/rate-limit'

export const route = createRoute(limitedRoute(limits.backend, {
  method: 'post',
  path: '/api/heartbeat',
  operationId: 'recordHeartbeat',
  security: [],
  tags: ['Installations'],
  summary: 'Installation heartbeat',
  description:
    'Never rejects: always 200. Only a verified caller (a `sk_` API key, or signed identity headers) updates ' +
    'anything: the target user\'s installations get `last_seen` = now and status `active`. The target is the ' +
    "body's `userId` when it is the caller's own or the caller is an admin, else the caller. A missing or bad " +
    'signature, a bad key, a malformed body or a store failure updates nothing and still answers 200.',
  ...identityOrKeyDocs,
  request: {
    // A plain schema, not zod: documented but never validated, since a heartbeat must not be refused.
    body: {
      required: false,
      content: { 'application/json': { schema: { type: 'object', properties: { userId: { type: 'string', maxLength: 256 } } } } },
    },
  },
  responses: { 200: ok(z.object({ success: z.literal(true), timestamp: z.string().max(64).openapi({ format: 'date-time' }) }).openapi('Heartbeat')) },
}))

/** The body's `userId` if it is a non-empty string; anything else (no body, bad JSON) is no claim. */
async function claimedUserId(c: Context<AppEnv>) {
  try {
    const body: unknown = JSON.parse(await c.req.text())
    const id = (body as { userId?: unknown } | null)?.userId
    return typeof id === 'string' && id.trim() ? id.trim() : undefined
  } catch {
    return undefined
  }
}

async function touch(c: Context<AppEnv>) {
  const caller = await resolveCaller(c).catch((e) => {
    if (e instanceof ApiError && e.status === 401) return null
    throw e
  })
  if (!caller) return
  const claimed = await claimedUserId(c)
  const target = claimed !== undefined && (claimed === caller.userId || (await isVerifiedAdminEmail(c, caller.email))) ? claimed : caller.userId
  await withUser(c.var.services.db, target, (tx) =>
    tx.update(installations).set({ lastSeen: sql`now()`, status: 'active' }).where(eq(installations.userId, target)),
  )
}

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  try {
    await touch(c)
  } catch (err) {
    // A runtime's heartbeat loop must not fail over our store: log it and answer as always.
    log.error('backend.heartbeat_not_recorded', { requestId: c.get('requestId'), ...errorFields(err) })
  }
  return c.json({ success: true as const, timestamp: new Date().toISOString() }, 200)
}
