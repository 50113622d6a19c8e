import type { WorkerdPlatform } from '../../support/workerd-platform'

/** What a dashboard tab sends: a browser's User-Agent and the app's own origin. */
export const BROWSER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0'

/**
 * A browser on the dashboard against the platform in workerd: keeps its cookies as a browser does, sends its
 * origin and user agent, its own client IP, and the CSRF header once it has one.
 */
export function browser(p: WorkerdPlatform, ip = `203.0.113.${1 + Math.floor(Math.random() * 250)}`) {
  const cookies = new Map<string, string>()
  let csrf: string | undefined
  async function call(method: string, path: string, body?: unknown, extra: Record<string, string> = {}, origin: 'app' | 'backend' = 'app') {
    const headers: Record<string, string> = { 'user-agent': BROWSER_AGENT, origin: p.origins.app, 'cf-connecting-ip': ip, ...extra }
    if (cookies.size) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
    if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await p.fetch(path, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), origin })
    for (const set of res.headers.getSetCookie?.() ?? []) {
      const [pair, ...attrs] = set.split(';')
      const eq = pair.indexOf('=')
      const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()]
      const expired = attrs.some((a) => /max-age=0\b/i.test(a.trim())) || value === ''
      if (expired) cookies.delete(name)
      else cookies.set(name, value)
    }
    return res
  }
  return {
    ip,
    cookies,
    call,
    get: (path: string, extra?: Record<string, string>) => call('GET', path, undefined, extra),
    post: (path: string, body?: unknown, extra?: Record<string, string>) => call('POST', path, body ?? {}, extra),
    /** Takes a CSRF token, as the dashboard does before its first state-changing call. */
    async csrf() {
      csrf = ((await (await call('GET', '/api/auth/csrf')).json()) as { header: string }).header
      return csrf
    },
  }
}
export type Browser = ReturnType<typeof browser>
