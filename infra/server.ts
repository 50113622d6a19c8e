// `npm start`: every family on one Node process, the web API and the backend API on their own ports.
import { serve } from '@hono/node-server'
import { existsSync, readFileSync } from 'node:fs'
import { createBackendApp } from '../functions/backend/app'
import { createWebApp } from '../functions/web'
import { configSchema, parseConfig } from '../lib/config'
import { gatewayPlugins } from '../functions/gateway/plugins'
import { errorFields, log } from '../lib/log'
import { registerSchedules } from './schedules'
import { createNodeServices } from './services'
import { reconcileLocalAgents } from './local-restart'
import { describeLocalSecrets, loadLocalSecrets } from './local-secrets'
import { INBOX_PATH, serveLocalPages } from './local-pages'
import { serveDocsScripts } from './static-assets'
import { serveWithSockets } from './websocket'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
process.env.APP_VERSION ??= `v${pkg.version}`

export async function startServer(env = process.env) {
  const webPort = Number(env.PORT ?? 8787)
  const backendPort = Number(env.BACKEND_PORT ?? 8788)
  env.BACKEND_URL ??= `http://127.0.0.1:${backendPort}`
  // Secrets not set in the environment: generated once under DATA_DIR and read back on every later start, so a
  // restart keeps sessions and every value sealed at rest (infra/local-secrets.ts). Workers configure theirs.
  const secrets = loadLocalSecrets(env, env.DATA_DIR ?? '.data')
  const host = env.HOST ?? '127.0.0.1'
  const ownOrigins = trustOwnOrigins(env, webPort)
  // Locally an agent is a process on this machine (infra/local-runtime-provider.ts): provisioning is on unless set.
  env.PROVISIONING_ENABLED ??= '1'
  gatewayPlugins(parseConfig(env)) // a bad GATEWAY_PLUGINS stops the start, saying what is wrong
  const services = await createNodeServices({ env })
  // Local runtimes are this process's children: none from a previous start runs any more (infra/local-restart.ts).
  const restart = services.services.runtimes.kind === 'local' ? await reconcileLocalAgents(services.services) : null

  const web = createWebApp(services.provider)
  services.setDeliver((req) => Promise.resolve(web.fetch(req)))

  const backendApp = createBackendApp(services.provider)
  serveDocsScripts({ docs: web, backend: backendApp })
  const config = services.services.config
  const inbox = serveLocalPages(web, { db: () => services.services.db, config })
  await registerSchedules(services.services.queue, services.services.config) // the crons configured here; QStash in production: README "Crons"

  // The web listener takes WebSocket upgrades too (the permission socket); the backend has none.
  const webListener = serveWithSockets({ fetch: web.fetch, port: webPort, hostname: host }, services.services)
  const servers = [webListener.server, serve({ fetch: backendApp.fetch, port: backendPort, hostname: host })]
  const a = services.adapters
  console.log(`web API      http://${host}:${webPort}  (docs at /api/docs)`)
  console.log(`backend API  http://${host}:${backendPort}  (docs at /docs)`)
  console.log(`stores       db=${a.db} kv=${a.kv} queue=${a.queue} storage=${a.storage} runtimes=${a.runtimes}`)
  console.log(`secrets      ${describeLocalSecrets(secrets)}`)
  // The internal key is printed only when this server generated or keeps it: one set in the environment is the operator's.
  if (secrets.sources.INTERNAL_API_KEY && secrets.sources.INTERNAL_API_KEY !== 'environment') {
    console.log(`internal key ${env.INTERNAL_API_KEY}  (INTERNAL_API_KEY: the agents' tool-call hook and internal callers)`)
  }
  if (!config.ADMIN_EMAILS.length) console.log('admin        none: start with ADMIN_EMAILS=you@example.com, then verify that address')
  if (inbox) console.log(`mail         no provider: read it at http://${displayHost(host)}:${webPort}${INBOX_PATH} (links in it lead to this server)`)
  if (a.runtimes === 'local-processes') {
    console.log(`runtimes     local processes whose chat answers by echoing ("Echo: <message>"); set RAILWAY_* for real runtimes (README "Local runtimes")`)
  }
  if (ownOrigins) console.log(`origins      trusted ${config.APP_ORIGIN.join(', ')}; mail links start ${config.baseUrl}`)
  for (const path of secrets.tightened) console.warn(`secrets      ${path} was readable by others: now owner-only`)
  if (env.NODE_ENV === 'production' && Object.values(secrets.sources).some((s) => s !== 'environment')) {
    console.warn('secrets      NODE_ENV=production with secrets kept under DATA_DIR: configure them in the environment (README "Local secrets")')
  }
  if (restart && restart.stopped + restart.interrupted > 0) {
    console.log(
      `agents       ${restart.stopped} recorded stopped (their runtime ended with the previous server: start them again)` +
        (restart.interrupted ? `, ${restart.interrupted} recorded error (their creation was cut off)` : ''),
    )
  }

  return {
    /** Closes open WebSockets, stops listening, ends idle keep-alive connections (open ones finish their request), closes the stores. */
    async close() {
      await webListener.closeSockets()
      await Promise.all(
        servers.map((s) => {
          const closed = new Promise((r) => s.close(r))
          if ('closeIdleConnections' in s) s.closeIdleConnections()
          return closed
        }),
      )
      await services.close()
    },
  }
}

/** A wildcard listen address is reached on the loopback from this machine. */
const displayHost = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host)

/**
 * Outside production the local server trusts its own web origins (its docs page's "try it" and the local mail
 * pages send cookies from there). Without APP_ORIGIN, links in mail lead to this server's pages too (no dashboard
 * runs locally), and a dashboard on localhost:3000 stays trusted. Answers whether it changed anything.
 */
function trustOwnOrigins(env: Record<string, string | undefined>, webPort: number): boolean {
  if (env.NODE_ENV === 'production') return false
  const own = [`http://localhost:${webPort}`, `http://127.0.0.1:${webPort}`]
  const configured = env.APP_ORIGIN ? configSchema.shape.APP_ORIGIN.parse(env.APP_ORIGIN) : [] // as the app reads it
  const origins = configured.length ? [...configured, ...own] : [...own, 'http://localhost:3000']
  env.APP_ORIGIN = [...new Set(origins)].join(',')
  return true
}

const SHUTDOWN_GRACE_MS = 5000

/**
 * SIGINT and SIGTERM close the servers and stores, then exit. `npm start` execs node (package.json), so a
 * signal sent to npm reaches this process; Ctrl+C sends SIGINT to npm and here at once, so a repeated
 * signal is not a second request. A shutdown stuck past the grace period exits anyway.
 */
function exitOnSignals(server: { close(): Promise<void> }) {
  let stopping = false
  const stop = (sig: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log.info('server.stopping', { signal: sig })
    setTimeout(() => {
      log.error('server.shutdown_timed_out', { graceMs: SHUTDOWN_GRACE_MS })
      process.exit(1)
    }, SHUTDOWN_GRACE_MS).unref()
    server.close().then(
      () => process.exit(0),
      (e) => {
        log.error('server.shutdown_failed', errorFields(e))
        process.exit(1)
      },
    )
  }
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, stop)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // A .env in the working directory fills what the environment leaves unset (.env.example lists every setting).
  if (existsSync('.env')) {
    process.loadEnvFile('.env')
    console.log('env          read .env (the environment wins over it)')
  }
  exitOnSignals(await startServer())
}
