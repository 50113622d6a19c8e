import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../../../lib/auth/session'
import { sessions, users } from '../../../schema'
import { ADMIN_EMAIL, type WorkerdPlatform } from '../../support/workerd-platform'
import { browser, BROWSER_AGENT } from './browser'

let seq = 0

/**
 * A verified user with a live session, written to the database (for journeys that are not about signing up:
 * accounts.ts signs up through the API), and a dashboard browser holding that session's cookie.
 * `admin` makes the user the listed admin (there is one such account per platform).
 */
export async function signedIn(p: WorkerdPlatform, name: string, opts: { admin?: boolean; plan?: string | null } = {}) {
  const email = opts.admin ? ADMIN_EMAIL : `${name.toLowerCase()}-${++seq}-${crypto.randomUUID().slice(0, 6)}@example.com`
  const plan = opts.plan ?? null
  const [user] = await p.db
    .insert(users)
    .values({ email, name, emailVerifiedAt: new Date(), ...(plan ? { plan, subscriptionStatus: 'active' } : {}) })
    .returning()
  const token = newSessionToken()
  await p.db.insert(sessions).values({ tokenHash: await hashSessionToken(token), userId: user.id, expiresAt: new Date(Date.now() + SESSION_TTL_MS) })
  const b = browser(p)
  b.cookies.set(SESSION_COOKIE, token)
  return Object.assign(b, { user: { id: user.id, email, name } })
}
export type Person = Awaited<ReturnType<typeof signedIn>>

const admins = new WeakMap<object, Promise<Person>>()
/** The platform's one admin (ADMIN_EMAIL), signed in once and shared by the journeys that need one. */
export function admin(p: WorkerdPlatform): Promise<Person> {
  const key = p.db as object
  let a = admins.get(key)
  if (!a) admins.set(key, (a = signedIn(p, 'Admin', { admin: true })))
  return a
}

/** The answer to a request without a session. */
export const UNAUTHORIZED = { error: 'Unauthorized', code: 'UNAUTHORIZED' }

/** A request with `who`'s session cookie and a body of any type (a multipart upload), as the dashboard sends it. */
export function sendAs(p: WorkerdPlatform, who: Person | undefined, method: string, path: string, body?: BodyInit, headers: Record<string, string> = {}) {
  const cookie = who ? [...who.cookies].map(([k, v]) => `${k}=${v}`).join('; ') : undefined
  return p.fetch(path, {
    method,
    headers: { 'user-agent': BROWSER_AGENT, origin: p.origins.app, 'cf-connecting-ip': who?.ip ?? '203.0.113.254', ...(cookie ? { cookie } : {}), ...headers },
    body,
  })
}
