// `npm start`: every family on one Node process, the web API and the backend API on their own ports.
import { serve } from '@hono/node-server'
import { readFileSync } from 'node:fs'
import { createBackendApp } from '../functions/backend/app'
import { createWebApp } from '../functions/web'
import { createNodeServices } from './services'
import { serveDocsScripts } from './static-assets'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
process.env.APP_VERSION ??= `v${pkg.version}`

export async function startServer(env = process.env) {
  const webPort = Number(env.PORT ?? 8787)
  const backendPort = Number(env.BACKEND_PORT ?? 8788)
  env.BACKEND_URL ??= `http://127.0.0.1:${backendPort}`
  if (!env.SESSION_SECRET && !env.NEXTAUTH_SECRET) {
    // Local convenience only: CSRF tokens then last as long as the process. Workers must set one.
    env.SESSION_SECRET = crypto.randomUUID() + crypto.randomUUID()
    console.warn('SESSION_SECRET not set: using a random one for this process')
  }
  const services = await createNodeServices({ env })

  const web = createWebApp(services.provider)
  services.setDeliver((req) => Promise.resolve(web.fetch(req)))

  const backendApp = createBackendApp(services.provider)
  serveDocsScripts({ docs: web, backend: backendApp })

  const host = env.HOST ?? '127.0.0.1'
  const servers = [
    serve({ fetch: web.fetch, port: webPort, hostname: host }),
    serve({ fetch: backendApp.fetch, port: backendPort, hostname: host }),
  ]
  const a = services.adapters
  console.log(`web API      http://${host}:${webPort}  (docs at /api/docs)`)
  console.log(`backend API  http://${host}:${backendPort}  (docs at /docs)`)
  console.log(`stores       db=${a.db} kv=${a.kv} queue=${a.queue} storage=${a.storage}`)

  return {
    async close() {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
      await services.close()
    },
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startServer()
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.on(sig, () => {
      void server.close().then(() => process.exit(0))
    })
}
