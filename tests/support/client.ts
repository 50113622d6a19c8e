import { createBackendClient, createWebClient } from '../../lib/client'
import { BROWSER, type Harness, type SeededUser } from './harness'
import { userIp } from './requests'

/**
 * The typed web client on the harness's app, sending what the dashboard sends (the user's cookie, if any, from the
 * user's own address as `call` does, and the trusted origin): a renamed route or a wrong body in a test is then a
 * compile error.
 */
export function webClient(h: Harness, user?: SeededUser, headers: Record<string, string> = {}) {
  return createWebClient('http://localhost', {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => h.web.request(input, init),
    headers: { ...BROWSER, ...(user ? { cookie: user.cookie, 'cf-connecting-ip': userIp(user) } : {}), ...headers },
  })
}

/** The typed backend client on the harness's backend app. */
export function backendClient(h: Harness, headers: Record<string, string> = {}) {
  return createBackendClient('http://localhost', { fetch: (input: RequestInfo | URL, init?: RequestInit) => h.backend.request(input, init), headers })
}
