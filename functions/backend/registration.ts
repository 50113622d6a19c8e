import { z } from '@hono/zod-openapi'
import { eq, sql } from 'drizzle-orm'
import type { Context } from 'hono'
import { isVerifiedAdminEmail } from './admin'
import type { AppEnv } from '../../lib/context'
import { withUser } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { errorResponse, ok } from '../../lib/http/openapi'
import { installations, users } from '../../schema'

// Shared by register-home and register-link, and the mode list by installations; not a route itself.

export const INSTALLATION_MODES = ['home', 'link', 'cloud'] as const
export type InstallationMode = (typeof INSTALLATION_MODES)[number]

export const userIdField = z
  .string({ error: (iss) => (iss.input === undefined || iss.input === null ? 'userId required' : 'userId must be a string') })
  .trim()
  .min(1, 'userId required')
  .max(256, 'userId must be at most 256 characters')
  .openapi({ description: "The user to register; must be the caller's own id unless the caller is an admin" })

export const gatewayTokenField = z
  .string({ error: 'gatewayToken must be a string' })
  .min(1, 'gatewayToken must not be empty')
  .max(1024, 'gatewayToken must be at most 1024 characters')
  .optional()
  .openapi({ description: "The runtime gateway's token; kept as it was when omitted" })

export const RegisteredSchema = z
  .object({
    success: z.literal(true),
    message: z.string().max(1024),
    dashboardUrl: z.string().max(2048).openapi({ example: 'https://app.example.com/dashboard' }),
  })
  .openapi('InstallationRegistered')

export const registerResponses = {
  200: ok(RegisteredSchema, 'Registered (created, or refreshed when the user already had one in this mode)'),
  400: errorResponse('`userId required` (`VALIDATION`), another invalid field, or invalid JSON'),
  401: errorResponse('`Invalid API key`, or identity headers unsigned (`SIGNATURE_REQUIRED`) or badly signed (`INVALID_SIGNATURE`)'),
  403: errorResponse("`Forbidden`: `userId` is not the caller's and the caller is not an admin"),
  404: errorResponse('`User not found`: no user has this `userId`'),
  415: errorResponse('Body sent with a Content-Type other than JSON'),
  500: errorResponse('Internal server error'),
}

export const REGISTER_RULES =
  'A user registers only themself: `userId` must equal the caller unless the caller is an admin (a verified email in `ADMIN_EMAILS`), ' +
  'else 403. An upsert on (user, mode): `registered_at` stays that of the first registration; `last_seen` and ' +
  'status `active` are refreshed, and `gatewayToken` when given. 404 when the user does not exist.'

/**
 * Authorises and upserts one installation. The caller is `c.var.identity` (set by `identityOrKey`).
 * Runs as the target user, so the row-level policy confines the write to their rows.
 */
export async function registerInstallation(
  c: Context<AppEnv>,
  input: { userId: string; mode: InstallationMode; gatewayToken?: string },
) {
  const caller = c.var.identity!
  if (input.userId !== caller.userId && !(await isVerifiedAdminEmail(c, caller.email))) throw new ApiError('FORBIDDEN')
  const { userId, mode, gatewayToken } = input
  await withUser(c.var.services.db, userId, async (tx) => {
    // The users policy lets app_user see exactly its own row: present iff the user exists.
    const [user] = await tx.select({ id: users.id }).from(users).where(eq(users.id, userId))
    if (!user) throw new ApiError('USER_NOT_FOUND')
    await tx
      .insert(installations)
      // Times come from the database clock (column defaults, now()), the one every read compares against.
      .values({ userId, mode, gatewayToken: gatewayToken ?? null })
      .onConflictDoUpdate({
        target: [installations.userId, installations.mode],
        // registered_at is left out on purpose: it stays that of the first registration.
        set: { lastSeen: sql`now()`, status: 'active', ...(gatewayToken === undefined ? {} : { gatewayToken }) },
      })
  })
  return {
    success: true as const,
    message: `${mode[0].toUpperCase()}${mode.slice(1)} installation registered`,
    dashboardUrl: `${c.var.services.config.baseUrl}/dashboard`,
  }
}
