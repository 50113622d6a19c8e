import type { NotFoundHandler } from 'hono'
import { TrieRouter } from 'hono/router/trie-router'
import { ApiError, renderError } from './errors'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * A known path asked with a method it does not take answers 405 `METHOD_NOT_ALLOWED` with `Allow` (HEAD
 * follows GET); any other miss goes to `notFound`. The matcher is built on first use, from the app's routes
 * as mounted by then (middleware, registered for every method, does not make a path known).
 */
export function methodNotAllowedOr(notFound: NotFoundHandler, routes: () => ReadonlyArray<{ method: string; path: string }>): NotFoundHandler {
  let router: TrieRouter<string> | undefined
  const allowed = (path: string) => {
    if (!router) {
      router = new TrieRouter<string>()
      for (const r of routes()) if (r.method !== 'ALL') router.add(r.method, r.path, r.method)
    }
    const found = METHODS.filter((m) => router!.match(m, path)[0].length > 0)
    if (found.includes('GET') && !found.includes('HEAD')) found.splice(1, 0, 'HEAD')
    return found
  }
  return (c) => {
    const allow = allowed(c.req.path.replace(/(.)\/+$/, '$1'))
    // A route that takes this method yet passed on (no handler answered) is a miss, not a 405.
    if (!allow.length || (allow as string[]).includes(c.req.method)) return notFound(c)
    return renderError(c, new ApiError('METHOD_NOT_ALLOWED', { headers: { Allow: allow.join(', ') } }))
  }
}
