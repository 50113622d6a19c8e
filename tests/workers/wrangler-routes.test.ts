// wrangler.toml's routes against the routes each family serves: every served path must reach its own Worker
// (Cloudflare sends a request to the most specific matching pattern), and every pattern must win at least one.
// Cloudflare matches a pattern against the whole URL, query string included, so an exact pattern misses
// `/api/token-gating?address=…`; and the API takes `/api/keys/` as `/api/keys`. Both variants are checked.
import { describe, expect, it } from 'vitest'
import { functionEntries } from '../../infra/bundle'
import type { Router } from '../../lib/app'
import { parsePattern, type Pattern, readDeployment, routeOf } from '../support/wrangler-deployment'

/** A path a Worker serves, on the host its patterns name. */
interface Served {
  worker: string
  host: string
  path: string
}

/** Everything wrong between the patterns and what the Workers serve; empty when they agree. */
function routingProblems(patterns: Pattern[], served: Served[]) {
  const problems: string[] = []
  const winners = new Set<Pattern>()
  for (const s of served) {
    const won = routeOf(patterns, s.host, s.path)
    if (won) winners.add(won)
    if (won?.worker !== s.worker) problems.push(`${s.host}${s.path} (${s.worker}) goes to ${won ? `${won.worker} by ${won.raw}` : 'no Worker'}`)
  }
  for (const p of patterns) if (!winners.has(p)) problems.push(`${p.worker}: ${p.raw} routes none of its paths (dead)`)
  const seen = new Map<string, string>()
  for (const p of patterns) {
    const other = seen.get(p.raw)
    if (other) problems.push(`${p.raw} is claimed by ${other} and ${p.worker}`)
    seen.set(p.raw, p.worker)
  }
  return problems
}

/** A Hono path as a request path: `:param` becomes a sample segment. */
const samplePath = (path: string) => path.replace(/:[^/]+/g, 'sample-id')

/** A served path as requests reach it: bare, with a query string, and with a trailing slash. */
const asRequested = (path: string) => [path, `${path}?probe=1`, ...(path.endsWith('/') ? [] : [`${path}/`])]

/** The paths a family's app answers (middleware entries, method ALL, are not routes). */
const pathsOf = (app: Router) => [...new Set(app.routes.filter((r) => r.method !== 'ALL').map((r) => samplePath(r.path)))]

async function deployment() {
  const patterns: Pattern[] = []
  const served: Served[] = []
  const workers: string[] = []
  for (const worker of readDeployment().workers) {
    workers.push(worker.family)
    // Patterns name the family, as the problems report them.
    patterns.push(...worker.patterns.map((p) => ({ ...p, worker: worker.family })))
    const { app } = (await import(`../../functions/${worker.family}/app.ts`)) as { app: Router }
    for (const path of pathsOf(app).flatMap(asRequested)) served.push({ worker: worker.family, host: worker.host, path })
  }
  return { patterns, served, workers }
}

describe('wrangler.toml routes', () => {
  it('every function is deployed by an environment of its own', async () => {
    const { workers } = await deployment()
    expect(workers.sort()).toEqual(functionEntries().map((f) => f.family).sort())
  })

  it('every served path reaches its own Worker, and every pattern routes at least one of them', async () => {
    const { patterns, served } = await deployment()
    expect(served.length).toBeGreaterThan(150)
    expect(routingProblems(patterns, served)).toEqual([])
  })

  it('reports drift: a path no pattern sends, a more specific pattern of another Worker, a dead pattern', () => {
    const keys = parsePattern('keys', 'app.example.com/api/keys')
    const keysAll = parsePattern('keys', 'app.example.com/api/keys/*')
    const served: Served[] = [
      { worker: 'keys', host: 'app.example.com', path: '/api/keys' },
      { worker: 'keys', host: 'app.example.com', path: '/api/keys/validate' },
    ]
    expect(routingProblems([keys, keysAll], served)).toEqual([])
    expect(routingProblems([keys], served)).toEqual(['app.example.com/api/keys/validate (keys) goes to no Worker'])
    const thief = parsePattern('auth', 'app.example.com/api/keys/validate')
    expect(routingProblems([keys, keysAll, thief], served)).toEqual([
      'app.example.com/api/keys/validate (keys) goes to auth by app.example.com/api/keys/validate',
      'keys: app.example.com/api/keys/* routes none of its paths (dead)',
    ])
    const withQuery: Served = { worker: 'keys', host: 'app.example.com', path: '/api/keys?probe=1' }
    expect(routingProblems([keys], [withQuery])).toEqual(['app.example.com/api/keys?probe=1 (keys) goes to no Worker', 'keys: app.example.com/api/keys routes none of its paths (dead)'])
    expect(routingProblems([parsePattern('keys', 'app.example.com/api/keys*')], [withQuery])).toEqual([])
    const stale = parsePattern('keys', 'app.example.com/api/key')
    expect(routingProblems([keys, keysAll, stale], served)).toEqual(['keys: app.example.com/api/key routes none of its paths (dead)'])
  })

  it('ranks as Cloudflare does: exact host, then the longer path, then an exact path', () => {
    const p = (worker: string, raw: string) => parsePattern(worker, raw)
    const all = [p('a', '*example.com/*'), p('b', 'app.example.com/*'), p('c', 'app.example.com/api/*'), p('d', 'app.example.com/api/x'), p('e', 'app.example.com/api/x*')]
    expect(routeOf(all, 'app.example.com', '/api/x')?.worker).toBe('d')
    expect(routeOf(all, 'app.example.com', '/api/xy')?.worker).toBe('e')
    expect(routeOf(all, 'app.example.com', '/api/y')?.worker).toBe('c')
    expect(routeOf(all, 'app.example.com', '/other')?.worker).toBe('b')
    expect(routeOf(all, 'www.example.com', '/api/x')?.worker).toBe('a')
    expect(routeOf(all, 'example.org', '/')).toBeUndefined()
  })
})
