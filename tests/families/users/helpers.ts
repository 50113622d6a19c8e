import { and, desc, eq } from 'drizzle-orm'
import { expect } from 'vitest'
import type { LocalQueue } from '../../../infra/local-queue'
import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../../../lib/auth/session'
import { mailOutbox, sessions } from '../../../schema'
import type { Harness } from '../../support/harness'
import { call } from '../../support/requests'

let ipCounter = 0
/** A client address no other request in this file uses: forgot and reset are limited per IP. */
export const freshIp = () => `198.51.100.${++ipCounter}`

export interface SendOptions {
  cookie?: string
  ip?: string
  headers?: Record<string, string>
}

/** A JSON request as the dashboard sends it: trusted Origin, browser UA, and the cookie when given. */
export function send(h: Harness, method: string, path: string, body: unknown, opts: SendOptions = {}) {
  const headers = { 'cf-connecting-ip': opts.ip ?? freshIp(), ...(opts.cookie ? { cookie: opts.cookie } : {}), ...opts.headers }
  return call(h, method, path, { body, headers })
}

export const getUser = (h: Harness, cookie: string) => h.web.request('/api/user', { headers: { cookie } })

export const forgot = (h: Harness, email: unknown, ip?: string) => send(h, 'POST', '/api/auth/forgot-password', { email }, { ip })

export const reset = (h: Harness, token: unknown, password: unknown, ip?: string) =>
  send(h, 'POST', '/api/auth/reset-password', { token, password }, { ip })

/**
 * Resolves once the in-process queue has delivered everything published so far and due within a minute
 * (forgot-password's jobs; not a permission request's expiry, 10 minutes out).
 */
export const queueIdle = (h: Harness) => (h.services.queue as Partial<LocalQueue>).idle?.({ dueWithinMs: 60_000 }) ?? Promise.resolve()

/** The newest mail of `kind` to `email` in the dev outbox, once the queued jobs have run. */
export async function lastMail(h: Harness, email: string, kind: string) {
  await queueIdle(h)
  const [mail] = await h.db
    .select()
    .from(mailOutbox)
    .where(and(eq(mailOutbox.to, email.toLowerCase()), eq(mailOutbox.kind, kind)))
    .orderBy(desc(mailOutbox.createdAt))
    .limit(1)
  expect(mail, `a ${kind} mail to ${email}`).toBeDefined()
  return mail
}

/** The newest reset mail to `email` in the dev outbox, and the token in its link. */
export async function lastResetMail(h: Harness, email: string) {
  const mail = await lastMail(h, email, 'password-reset')
  const token = /\/reset-password\?token=([0-9a-f]{64})\b/.exec(mail.text)?.[1]
  expect(token, mail.text).toBeDefined()
  return { mail, token: token! }
}

/** Asks for a reset link for `email` and returns its token. */
export async function requestReset(h: Harness, email: string) {
  const res = await forgot(h, email)
  expect(res.status).toBe(200)
  return (await lastResetMail(h, email)).token
}

/** A fresh user with password `PASSWORD` and a signed-in session, for tests that change passwords or sessions. */
let userCounter = 0
export const freshUser = (h: Harness, name = 'Carol', opts: { verified?: boolean } = {}) =>
  h.seedUser(name, `${name.toLowerCase()}-${++userCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`, opts)

/** Another live session for `userId` (a second browser); returns its cookie and token hash. */
export async function extraSession(h: Harness, userId: string) {
  const token = newSessionToken()
  const tokenHash = await hashSessionToken(token)
  await h.db.insert(sessions).values({ tokenHash, userId, expiresAt: new Date(Date.now() + SESSION_TTL_MS) })
  return { cookie: `${SESSION_COOKIE}=${token}`, tokenHash }
}

export const sessionsOf = (h: Harness, userId: string) => h.db.select().from(sessions).where(eq(sessions.userId, userId))

/** Fixed windows are aligned to the epoch: start a counting test only with `needMs` left in the window. */
export async function freshWindow(windowSec: number, needMs: number) {
  const windowMs = windowSec * 1000
  const left = windowMs - (Date.now() % windowMs)
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50))
}
