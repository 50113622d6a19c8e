// wrangler.toml read as Cloudflare reads it: each environment's Worker, its route patterns, bindings and vars, and
// the Worker a request reaches (the most specific matching pattern). Used by the routes check
// (tests/workers/wrangler-routes.test.ts) and by the workerd journeys' router (./workerd-platform.ts).
import { experimental_readRawConfig } from 'wrangler'

export interface Pattern {
  worker: string
  raw: string
  host: string
  hostWildcard: boolean
  path: string
  pathWildcard: boolean
}

/** `*.example.com/api/*`: a wildcard may lead the host and end the path (Cloudflare's route syntax). */
export function parsePattern(worker: string, raw: string): Pattern {
  const bare = raw.replace(/^https?:\/\//, '')
  const slash = bare.indexOf('/')
  const host = slash < 0 ? bare : bare.slice(0, slash)
  const path = slash < 0 ? '/' : bare.slice(slash)
  return {
    worker,
    raw,
    host: host.replace(/^\*/, ''),
    hostWildcard: host.startsWith('*'),
    path: path.replace(/\*$/, ''),
    pathWildcard: path.endsWith('*'),
  }
}

const matches = (p: Pattern, host: string, path: string) =>
  (p.hostWildcard ? host.endsWith(p.host) : host === p.host) && (p.pathWildcard ? path.startsWith(p.path) : path === p.path)

/** Most specific first: an exact host, then the longer path, then an exact path over a wildcard one. */
const specificity = (p: Pattern) => [p.hostWildcard ? 0 : 1, p.path.length, p.pathWildcard ? 0 : 1]
export function moreSpecific(a: Pattern, b: Pattern) {
  const [x, y] = [specificity(a), specificity(b)]
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i]
  return 0
}

/** The pattern Cloudflare would pick for `host` + `path` (the path with its query string), or undefined when none matches. */
export function routeOf(patterns: Pattern[], host: string, path: string) {
  return patterns.filter((p) => matches(p, host, path)).sort((a, b) => moreSpecific(b, a))[0]
}

/** The fields of a wrangler environment read here. */
interface RawEnv {
  name?: string
  main?: string
  routes?: Array<string | { pattern: string }>
  vars?: Record<string, string>
  assets?: { directory: string; binding?: string }
  durable_objects?: { bindings?: Array<{ name: string; class_name: string; script_name?: string }> }
}

/** One environment of wrangler.toml: a family's Worker as deployed. */
export interface DeployedWorker {
  /** The environment's key (`[env.<env>]`). */
  env: string
  /** The Worker's script name (`name`), which other Workers' Durable Object bindings name as `script_name`. */
  name: string
  family: string
  patterns: Pattern[]
  host: string
  vars: Record<string, string>
  assets?: { directory: string; binding?: string }
  durableObjects: Array<{ name: string; className: string; scriptName?: string }>
}

/** Every environment of wrangler.toml, with the top-level settings each inherits. */
export function readDeployment(config = 'wrangler.toml') {
  const { rawConfig } = experimental_readRawConfig({ config }) as {
    rawConfig: { compatibility_date: string; compatibility_flags?: string[]; env?: Record<string, RawEnv> }
  }
  const workers: DeployedWorker[] = []
  for (const [env, raw] of Object.entries(rawConfig.env ?? {})) {
    const family = raw.main?.match(/^dist\/(.+)\.js$/)?.[1]
    if (!family) throw new Error(`env.${env}: main is not dist/<family>.js`)
    const patterns = (raw.routes ?? []).map((r) => parsePattern(raw.name ?? env, typeof r === 'string' ? r : r.pattern))
    const hosts = new Set(patterns.map((p) => p.host))
    if (hosts.size !== 1) throw new Error(`env.${env}: its routes name ${hosts.size} hosts; a family serves on one`)
    workers.push({
      env,
      name: raw.name ?? env,
      family,
      patterns,
      host: [...hosts][0],
      vars: raw.vars ?? {},
      assets: raw.assets,
      durableObjects: (raw.durable_objects?.bindings ?? []).map((b) => ({ name: b.name, className: b.class_name, scriptName: b.script_name })),
    })
  }
  return { compatibilityDate: rawConfig.compatibility_date, compatibilityFlags: rawConfig.compatibility_flags ?? [], workers }
}
