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
