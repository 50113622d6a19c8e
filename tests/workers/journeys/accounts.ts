import { desc, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { mailOutbox } from '../../../schema'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { browser } from './browser'

const PASSWORD = 'correct-horse-battery'

/** The token of the newest mail to `to` with a link to `path`. */
export async function mailedToken(p: WorkerdPlatform, to: string, path = 'verify-email') {
  const mails = await p.db.select().from(mailOutbox).where(eq(mailOutbox.to, to)).orderBy(desc(mailOutbox.createdAt))
  for (const m of mails) {
    const token = m.text.match(new RegExp(`${path}\\?token=([0-9a-f]+)`))?.[1]
    if (token) return token
  }
  throw new Error(`no ${path} mail to ${to}`)
}

/** A new user signed up, signed in and verified through the Workers, as the dashboard does it: their browser. */
export async function signUpVerified(p: WorkerdPlatform) {
  const b = browser(p)
  const email = `journey-${crypto.randomUUID().slice(0, 8)}@example.com`
  expect((await b.post('/api/register', { email, password: PASSWORD })).status).toBe(201)
  await b.csrf()
  expect((await b.post('/api/auth/login', { email, password: PASSWORD })).status).toBe(200)
  expect((await b.post('/api/auth/verify-email', { token: await mailedToken(p, email) })).status).toBe(200)
  const user = (await (await b.get('/api/user')).json()) as { id: string }
  return Object.assign(b, { email, userId: user.id })
}

/** auth, users, keys, backend: sign up, verify, sign in, a key checked by the backend. */
export function accountJourneys(p: WorkerdPlatform) {
  describe('auth, users, keys and backend', () => {
    it('signs up, verifies by the mailed link, signs in, makes a key the backend accepts', async () => {
      const b = browser(p)
      const email = `journey-${crypto.randomUUID().slice(0, 8)}@example.com`
      const signup = await b.post('/api/register', { email, password: PASSWORD })
      expect(signup.status, await signup.clone().text()).toBe(201)
      await b.csrf()
      const login = await b.post('/api/auth/login', { email, password: PASSWORD })
      expect(login.status, await login.clone().text()).toBe(200)
      const verify = await b.post('/api/auth/verify-email', { token: await mailedToken(p, email) })
      expect(verify.status, await verify.clone().text()).toBe(200)
      const user = await (await b.get('/api/user')).json()
      expect(user).toMatchObject({ email })
      const created = await b.post('/api/keys', { name: 'journey' })
      expect(created.status).toBe(201)
      const { key } = (await created.json()) as { key: string }
      const valid = await p.fetch('/api/validate-key', { method: 'POST', headers: { authorization: `Bearer ${key}` }, origin: 'backend' })
      expect(valid.status, await valid.clone().text()).toBe(200)
    })
  })
}
