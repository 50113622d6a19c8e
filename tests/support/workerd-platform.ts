// The platform as it ships: every family's minified bundle (the file `wrangler deploy` uploads) in one workerd
// (miniflare), each Worker with its wrangler.toml environment (vars, Durable Object bindings), the production drivers
// pointed at the suite's peers (Postgres through the Neon proxy, Redis through the Upstash REST server, the QStash
// look-alike, s3rver), and requests sent to the Worker that wrangler.toml's patterns give them, one at a time, as a
// zone would route them. Every request's cost is recorded: subrequests (fetches and WebSockets through the Workers'
// outbound service, "the network") and CPU time of the workerd process while it ran.
import { drizzle } from 'drizzle-orm/node-postgres'
import { Miniflare } from 'miniflare'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import pg from 'pg'
import { buildFunctions } from '../../infra/bundle'
import { APP_LOGIN_ROLE, migratePostgres } from '../../infra/database'
import { registerSchedules } from '../../infra/schedules'
import { parseConfig } from '../../lib/config'
import { QStashQueue } from '../../lib/queue/qstash'
import * as schema from '../../schema'
import { serveFetch, type Loopback } from './loopback'
import { startNeonProxy } from './neon-proxy'
import { startQStashServer, type QStashServer } from './qstash-server'
import { S3rver } from './s3rver'
import { ensureTestRole, TEST_ROLE } from './stores'
import { startUpstashRestServer } from './upstash-rest-server'
import { type DeployedWorker, readDeployment, routeOf } from './wrangler-deployment'

/** The journeys need what the production drivers speak to: a real Postgres and a real Redis. */
export const workerdPlatformConfigured = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)
export const WORKERD_SKIP_REASON = 'skipped: the workerd journeys run the production drivers against a real Postgres and Redis (set TEST_DATABASE_URL and TEST_REDIS_URL, as .ci/run does)'

/**
 * Workers paid-plan limits a request is held to, with margin: 1,000 subrequests per invocation (the platform's
 * default) and 30 s of CPU (the default ceiling). Journeys fail at a tenth of either.
 */
export const WORKERS_LIMITS = { subrequests: 1000, cpuMs: 30_000 }
export const LIMIT_MARGIN = 0.1

/** What one request cost in workerd. */
export interface RequestCost {
  worker: string
  method: string
  path: string
  status: number
  /** Fetches and WebSocket connections the Worker opened while the request ran (its `waitUntil` work included). */
  subrequests: number
  /** CPU time of the workerd process while the request ran, all threads (an upper bound of the isolate's own). */
  cpuMs: number
  wallMs: number
  /** The Worker's first request: its isolate starts (the bundle is compiled) within it. */
  cold: boolean
  /** A subrequest of another platform request (a Worker calling the backend): its cost is within its caller's too. */
  nested?: boolean
}

const QSTASH = { token: 'qstash-workerd-token', current: 'sig_workerd_current_key', next: 'sig_workerd_next_key' }
/** The key QStash signs its deliveries with now (a test signs a delivery of its own with it). */
export const QSTASH_SIGNING_KEY = QSTASH.current
const S3 = { bucket: 'workerd-journeys', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
export const SECRETS = {
  SESSION_SECRET: 'workerd-session-secret-0123456789abcdef',
  INTERNAL_API_KEY: 'ik_workerd_internal_key_0123456789abcdef',
  HMAC_SECRET: 'workerd-hmac-secret-0123456789abcdef',
}
export const ADMIN_EMAIL = 'admin@example.com'

/** Set by the network on a Worker's request to the platform's own hosts: a subrequest of the request in flight. */
const NESTED_HEADER = 'x-platform-subrequest'

/**
 * "The network" every platform Worker's fetches and WebSockets go through (`outboundService`): counts them, and
 * resolves the hosts a test maps (`POST http://network.internal/hosts`, `{ "suffix": "http://127.0.0.1:port" }`) as a
 * test DNS would, e.g. a runtime's `*.up.railway.app` to a fake runtime on loopback.
 */
const NETWORK_WORKER = `
let subrequests = 0
let hosts = {}
export default {
  async fetch(req, env) {
    const url = new URL(req.url)
    if (url.hostname === 'network.internal') {
      if (url.pathname === '/hosts') { hosts = { ...hosts, ...(await req.json()) }; return Response.json(hosts) }
      return Response.json({ subrequests })
    }
    subrequests++
    // A Worker calling the platform itself (the backend, the app origin): marked, so it is not queued behind its caller.
    if (env.PLATFORM_HOSTS.split(',').includes(url.host)) {
      const nested = new Request(req)
      nested.headers.set('${NESTED_HEADER}', '1')
      return fetch(nested)
    }
    for (const [suffix, target] of Object.entries(hosts)) {
      if (url.hostname !== suffix && !url.hostname.endsWith('.' + suffix)) continue
      const to = new URL(target)
      url.protocol = to.protocol
      url.host = to.host
      return fetch(new Request(url, req))
    }
    return fetch(req)
  },
}
`

/** The ns of CPU every thread of process `pid` has used (Linux: /proc/<pid>/task/<tid>/schedstat). */
function processCpuNs(pid: number): number {
  let total = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // the thread ended meanwhile
    }
  }
  return total
}

/** The workerd process miniflare started for us: a child of this process. */
function workerdPid(): number {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (comm === 'workerd' && ppid === process.pid) return Number(pid)
    } catch {
      // gone
    }
  }
  throw new Error('no workerd child process found')
}

/** A Worker's fetch as miniflare hands it out (typed by workers-types, which this project does not install). */
type WorkerFetcher = { fetch(url: string, init?: RequestInit): Promise<Response> }

/** One request at a time, as its cost is read from the whole process. */
function serial() {
  let tail: Promise<unknown> = Promise.resolve()
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => {})
    return run
  }
}

export interface WorkerdPlatformOptions {
  /** Extra bindings for every Worker (a fake provider's URL and credentials). */
  env?: Record<string, string>
}

export async function startWorkerdPlatform(opts: WorkerdPlatformOptions = {}) {
  const closers: Array<() => Promise<unknown> | unknown> = []
  const close = async () => {
    for (const fn of closers.reverse()) await Promise.resolve(fn()).catch(() => {})
  }
  try {
    // A fresh database, migrated as its owner; the Workers connect as the app's login, the tests as theirs.
    const adminUrl = new URL(process.env.TEST_DATABASE_URL!)
    const dbName = `w_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`
    const admin = new pg.Client({ connectionString: adminUrl.toString() })
    await admin.connect()
    closers.push(() => admin.end())
    await admin.query(`create database ${dbName}`)
    closers.push(() => admin.query(`drop database if exists ${dbName} with (force)`))
    const url = Object.assign(new URL(adminUrl), { pathname: `/${dbName}` })
    await migratePostgres(url.toString())
    await ensureTestRole(admin)
    const testsPool = new pg.Pool({ connectionString: Object.assign(new URL(url), { username: TEST_ROLE }).toString(), max: 2 })
    // The database is dropped with force at the end: a connection still closing then hears so, and must not throw.
    testsPool.on('connect', (client) => client.on('error', () => {}))
    testsPool.on('error', () => {})
    closers.push(() => testsPool.end())
    const db = drizzle({ client: testsPool, schema })

    const neon = await startNeonProxy()
    closers.push(() => neon.close())
    closers.push(() => neon.endDatabase(dbName))
    const redis = await startUpstashRestServer({ redisUrl: process.env.TEST_REDIS_URL! })
    closers.push(() => redis.close())
    const qstash: QStashServer = await startQStashServer({ token: QSTASH.token, currentSigningKey: QSTASH.current, nextSigningKey: QSTASH.next })
    closers.push(() => qstash.close())
    const s3Dir = mkdtempSync(join(tmpdir(), 'workerd-s3-'))
    closers.push(() => rmSync(s3Dir, { recursive: true, force: true }))
    const s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: S3.bucket }] })
    const s3Address = await s3.run()
    closers.push(() => s3.close())

    // The bundles wrangler would upload (npm run build's), built once.
    const outDir = mkdtempSync(join(tmpdir(), 'workerd-dist-'))
    closers.push(() => rmSync(outDir, { recursive: true, force: true }))
    const built = new Map((await buildFunctions(outDir)).map((b) => [b.family, readFileSync(b.file, 'utf8')]))
    const deployment = readDeployment()

    // The two hosts of the zone, each on a loopback port of its own: QStash delivers to them, a caller may use them.
    let dispatch: (worker: DeployedWorker, req: Request, nested: boolean) => Promise<Response> = () => Promise.reject(new Error('not started'))
    const hostOf = new Map<string, string>()
    const listeners: Record<'app' | 'backend', Loopback> = {
      app: await serveFetch((req) => platformFetch(req)),
      backend: await serveFetch((req) => platformFetch(req)),
    }
    closers.push(() => listeners.app.close(), () => listeners.backend.close())
    const appHost = deployment.workers.find((w) => w.family === 'auth')!.host
    const backendHost = deployment.workers.find((w) => w.family === 'backend')!.host
    hostOf.set(new URL(listeners.app.url).host, appHost)
    hostOf.set(new URL(listeners.backend.url).host, backendHost)
    const origins = { app: listeners.app.url, backend: listeners.backend.url }

    const common: Record<string, string> = {
      ...SECRETS,
      APP_VERSION: 'v0.0.0-workerd',
      ADMIN_EMAILS: ADMIN_EMAIL,
      LOG_REQUESTS: '0',
      DATABASE_URL: Object.assign(new URL(url), { username: APP_LOGIN_ROLE }).toString(),
      NEON_LOCAL_PROXY: `127.0.0.1:${neon.port}`,
      UPSTASH_REDIS_REST_URL: redis.url,
      UPSTASH_REDIS_REST_TOKEN: redis.token,
      QSTASH_URL: qstash.url,
      QSTASH_TOKEN: QSTASH.token,
      QSTASH_CURRENT_SIGNING_KEY: QSTASH.current,
      QSTASH_NEXT_SIGNING_KEY: QSTASH.next,
      S3_BUCKET: S3.bucket,
      S3_ENDPOINT: `http://127.0.0.1:${s3Address.port}`,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: S3.accessKeyId,
      S3_SECRET_ACCESS_KEY: S3.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
      ...opts.env,
    }
    const logs: string[] = []
    const mf = new Miniflare({
      workers: [
        ...deployment.workers.map((w) => ({
          name: w.name,
          modules: [{ type: 'ESModule' as const, path: `${w.family}.js`, contents: built.get(w.family)! }],
          compatibilityDate: deployment.compatibilityDate,
          compatibilityFlags: deployment.compatibilityFlags,
          bindings: { ...w.vars, ...common, APP_ORIGIN: origins.app, BACKEND_URL: origins.backend, PUBLIC_URL: origins.app },
          durableObjects: Object.fromEntries(w.durableObjects.map((d) => [d.name, d.scriptName ? { className: d.className, scriptName: d.scriptName } : d.className])),
          outboundService: 'network',
        })),
        {
          name: 'network',
          modules: true,
          script: NETWORK_WORKER,
          compatibilityDate: deployment.compatibilityDate,
          bindings: { PLATFORM_HOSTS: Object.values(listeners).map((l) => new URL(l.url).host).join(',') },
        },
      ],
      handleRuntimeStdio(stdout: Readable, stderr: Readable) {
        for (const stream of [stdout, stderr]) {
          let rest = ''
          stream.on('data', (chunk: Buffer) => {
            const lines = (rest + chunk.toString('utf8')).split('\n')
            rest = lines.pop() ?? ''
            logs.push(...lines.filter(Boolean))
          })
        }
      },
    })
    closers.push(() => mf.dispose())
    await mf.ready
    // The crons, registered with QStash as README "Crons" says a deploy does.
    await registerSchedules(new QStashQueue(QSTASH.token, origins.app, qstash.url), parseConfig({ ...common, APP_ORIGIN: origins.app }))
    const pid = workerdPid()
    const network = (await mf.getWorker('network')) as unknown as WorkerFetcher
    const subrequests = async () => ((await (await network.fetch('http://network.internal/count')).json()) as { subrequests: number }).subrequests
    const costs: RequestCost[] = []
    const oneAtATime = serial()

    const measured = async (worker: DeployedWorker, req: Request, nested: boolean) => {
      const target = (await mf.getWorker(worker.name)) as unknown as WorkerFetcher
      const before = { sub: await subrequests(), cpu: processCpuNs(pid), t: performance.now() }
      const body = req.body ? await req.arrayBuffer() : undefined
      const res = await target.fetch(req.url, { method: req.method, headers: req.headers, body, redirect: 'manual' })
      // A stream (an SSE tail) or an upgrade is costed up to its headers; any other answer once its body is read.
      const streaming = res.status === 101 || /event-stream/.test(res.headers.get('content-type') ?? '')
      const answer = streaming ? res : new Response(res.status === 204 || res.status === 304 ? null : await res.arrayBuffer(), { status: res.status, headers: res.headers as never })
      const cpuMs = (processCpuNs(pid) - before.cpu) / 1e6
      const wallMs = performance.now() - before.t
      const path = new URL(req.url).pathname
      const cold = !costs.some((c) => c.worker === worker.family)
      costs.push({ worker: worker.family, method: req.method, path, status: res.status, subrequests: (await subrequests()) - before.sub, cpuMs, wallMs, cold, ...(nested && { nested }) })
      return streaming ? res : answer
    }
    // One request at a time, except a subrequest of the one in flight (it would wait for its own caller).
    dispatch = (worker, req, nested) => (nested ? measured(worker, req, true) : oneAtATime(() => measured(worker, req, false)))

    /** The Worker a URL reaches, by wrangler.toml's patterns on the host its loopback port stands for. */
    function workerFor(url: URL): DeployedWorker {
      const host = hostOf.get(url.host)
      if (!host) throw new Error(`${url.host} is not a host of the platform`)
      const pattern = routeOf(
        deployment.workers.flatMap((w) => w.patterns),
        host,
        url.pathname + url.search,
      )
      const worker = pattern && deployment.workers.find((w) => w.name === pattern.worker)
      if (!worker) throw new Error(`no Worker is routed ${host}${url.pathname}`)
      return worker
    }

    /** A request to the zone, as Cloudflare's edge passes it on: `CF-Connecting-IP` set. */
    function platformFetch(req: Request): Promise<Response> {
      const url = new URL(req.url)
      const headers = new Headers(req.headers)
      if (!headers.has('cf-connecting-ip')) headers.set('cf-connecting-ip', '198.51.100.7')
      const nested = headers.get(NESTED_HEADER) === '1'
      headers.delete(NESTED_HEADER)
      return dispatch(workerFor(url), new Request(url, { method: req.method, headers, body: req.body, duplex: 'half' } as RequestInit), nested)
    }

    return {
      origins,
      db,
      qstash,
      neon,
      redis,
      logs,
      costs,
      mf,
      /** `path` on the app host (or `origin: 'backend'`), through the Worker its pattern names. */
      fetch(path: string, init: RequestInit & { origin?: 'app' | 'backend' } = {}) {
        return platformFetch(new Request(new URL(path, origins[init.origin ?? 'app']), init))
      },
      /** Makes the Workers' requests to `*.<suffix>` reach `target` (`http://127.0.0.1:port`), as DNS would. */
      async mapHost(suffix: string, target: string) {
        await network.fetch('http://network.internal/hosts', { method: 'POST', body: JSON.stringify({ [suffix]: target }) })
      },
      close,
    }
  } catch (e) {
    await close()
    throw e
  }
}

export type WorkerdPlatform = Awaited<ReturnType<typeof startWorkerdPlatform>>

/** Per Worker: requests, the largest subrequest count, the first request's CPU (its isolate's start) and the warm ones' (ms), for the README's figures. */
export function costSummary(costs: RequestCost[]) {
  const by = new Map<string, RequestCost[]>()
  for (const c of costs) by.set(c.worker, [...(by.get(c.worker) ?? []), c])
  return [...by]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([worker, list]) => {
      const warm = list.filter((c) => !c.cold)
      const cpu = warm.map((c) => c.cpuMs).sort((a, b) => a - b)
      const heaviest = warm.length ? warm.reduce((a, b) => (b.cpuMs > a.cpuMs ? b : a)) : undefined
      return {
        worker,
        requests: list.length,
        maxSubrequests: Math.max(...list.map((c) => c.subrequests)),
        coldCpuMs: Math.round(list[0].cpuMs),
        medianWarmCpuMs: cpu.length ? Math.round(cpu[Math.floor((cpu.length - 1) / 2)] * 10) / 10 : null,
        maxWarmCpuMs: heaviest ? Math.round(heaviest.cpuMs * 10) / 10 : null,
        heaviest: heaviest ? `${heaviest.method} ${heaviest.path}` : null,
      }
    })
}
