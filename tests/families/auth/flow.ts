import { desc, eq } from 'drizzle-orm'
import { mailOutbox } from '../../../schema'
import type { Harness } from '../../support/harness'
import { BROWSER } from '../../support/harness'

/** Helpers every auth suite uses: a JSON request from the dashboard, a CSRF header, a login. */
export const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...BROWSER, ...headers },
  body: JSON.stringify(body),
})

export async function csrfHeader(h: Harness) {
  return ((await (await h.web.request('/api/auth/csrf')).json()) as { header: string }).header
}

export async function login(h: Harness, email: string, password: string, ip = '203.0.113.1') {
  return h.web.request('/api/auth/login', json({ email, password }, { 'x-csrf-token': await csrfHeader(h), 'cf-connecting-ip': ip }))
}

/** The `name=value` part of the session Set-Cookie. */
export const sessionCookie = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

export const register = (h: Harness, body: Record<string, unknown>, ip = '198.51.100.7') =>
  h.web.request('/api/register', json(body, { 'cf-connecting-ip': ip }))

/** The token in the newest verification mail to `email` (dev outbox). */
export async function lastVerificationToken(h: Harness, email: string) {
  const rows = await h.db.select().from(mailOutbox).where(eq(mailOutbox.to, email.toLowerCase())).orderBy(desc(mailOutbox.createdAt))
  const mail = rows.find((m) => m.kind === 'email-verification')
  if (!mail) throw new Error(`no verification mail to ${email}`)
  const token = /^http:\/\/localhost:3000\/verify-email\?token=([0-9a-f]{64})$/m.exec(mail.text)?.[1]
  if (!token) throw new Error(`no verification link in: ${mail.text}`)
  return token
}

let verifyIp = 0
/**
 * `POST /api/auth/verify-email` from a fresh client address (the route is limited per IP); `cookie` when the
 * browser opening the link holds a session.
 */
export const verifyEmail = (h: Harness, token: unknown, ip = `198.51.101.${++verifyIp % 250}`, cookie?: string) =>
  h.web.request('/api/auth/verify-email', json({ token }, { 'cf-connecting-ip': ip, ...(cookie ? { cookie } : {}) }))

export const resendVerification = (h: Harness, cookie: string, headers: Record<string, string> = {}) =>
  h.web.request('/api/auth/verify-email/resend', json({}, { cookie, ...headers }))
