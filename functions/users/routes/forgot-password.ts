import { createRoute, z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq, sql } from 'drizzle-orm'
import type { AppEnv } from '../../../lib/context'
import { randomHex, sha256Hex } from '../../../lib/crypto'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limits } from '../../../lib/http/limits'
import { rateLimit } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import type { MailMessage } from '../../../lib/mail/types'
import { passwordResets, users } from '../../../schema'
import { emailField } from '../../../lib/http/fields'
import { OkSchema } from '../schemas'
import { errorFields, log } from '../../../lib/log'

const ForgotPasswordBody = z
  .object({
    email: emailField(),
  })
  .openapi('ForgotPasswordRequest')

export const route = createRoute({
  method: 'post',
  path: '/api/auth/forgot-password',
  tags: ['Users'],
  summary: 'Forgot password: mail a reset link',
  description:
    'Always 200 `{ok: true}` for a well-formed email, whether or not an account has it. For an account, mails ' +
    '`{base_url}/reset-password?token=<64 hex>`; the link works once, within 1 hour. Only the token\'s SHA-256 is ' +
    'stored. A malformed email is 400 `VALIDATION` (that tells nothing about accounts). Wallet-derived addresses ' +
    'get no mail. Rate limited per IP: 5 per 15 minutes, shared with reset-password.',
  middleware: [rateLimit(limits.passwordReset)] as const,
  request: { body: jsonBody(ForgotPasswordBody) },
  responses: {
    200: ok(OkSchema, 'Accepted; a link was mailed if the account exists'),
    400: errorResponse('Missing or invalid email (`VALIDATION`)'),
    429: errorResponse('Too many requests'),
  },
})

export const RESET_TTL_MINUTES = 60

export const resetMail = (to: string, link: string): MailMessage => ({
  to,
  kind: 'password-reset',
  subject: 'Reset your password',
  text:
    `Someone asked to reset the password of your account.\n\n` +
    `To choose a new password, open this link within ${RESET_TTL_MINUTES} minutes (it works once):\n${link}\n\n` +
    `If you did not ask for this, ignore this email: your password stays as it is.`,
})

// Runs before anyone is signed in: service-role queries on `services.db`, not `asUser`.
export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const email = c.req.valid('json').email.toLowerCase()
  const { db, config, mail } = c.var.services
  const [user] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.email, email)).limit(1)
  // Wallet users' derived addresses have no mailbox behind them.
  if (user && !user.email.endsWith(`@wallet.${config.serviceDomain}`)) {
    const token = randomHex(32)
    await db.insert(passwordResets).values({
      tokenHash: await sha256Hex(token),
      userId: user.id,
      // The database clock, the same one reset-password compares against.
      expiresAt: sql`now() + make_interval(mins => ${RESET_TTL_MINUTES})`,
    })
    try {
      await mail.send(resetMail(user.email, `${config.baseUrl}/reset-password?token=${token}`))
    } catch (e) {
      // Still 200: an error only for existing accounts would reveal them. The error never holds the link.
      log.error('mail.password_reset_failed', { requestId: c.var.requestId, ...errorFields(e) })
    }
  }
  return c.json({ ok: true as const }, 200)
}
