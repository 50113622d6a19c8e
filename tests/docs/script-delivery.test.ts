import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Miniflare } from 'miniflare'
import { afterAll, describe, expect, it } from 'vitest'
import { app as backendApp } from '../../functions/backend/app'
import { app as docsApp } from '../../functions/docs/app'
import { bundleFunction } from '../../infra/bundle'
import { copyDocsScript, docsPages, SCALAR_STANDALONE, serveDocsScripts } from '../../infra/static-assets'
import { createRouter, createWorker } from '../../lib/app'
import { docsScriptPath } from '../../lib/http/openapi-docs'

/** How the docs pages' 4.3 MB renderer reaches a browser without ever being bundled into a Worker. */
const root = fileURLToPath(new URL('../..', import.meta.url))
const standalone = readFileSync(SCALAR_STANDALONE, 'utf8')
// A line only Scalar's standalone bundle carries (its stylesheet's banner), not the page template in @scalar/core.
const STANDALONE_MARK = '/*! tailwindcss'
const assetsRoot = mkdtempSync(join(tmpdir(), 'docs-assets-'))
const open: Miniflare[] = []
afterAll(async () => {
  await Promise.all(open.map((mf) => mf.dispose()))
  rmSync(assetsRoot, { recursive: true, force: true })
})

/** Every URL the page's markup names (src, href, url(...)) and every absolute http(s) URL anywhere in it. */
function referencedUrls(html: string) {
  const attrs = [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1])
  const cssUrls = [...html.matchAll(/url\(\s*["']?([^"')]+)/gi)].map((m) => m[1])
  const absolute = [...html.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/gi)].map((m) => m[0])
  return { local: [...attrs, ...cssUrls], absolute }
}

describe('the docs script: never in a Worker bundle, served as a static asset', () => {
  it('is the 4.3 MB standalone browser bundle of @scalar/api-reference', () => {
    expect(statSync(SCALAR_STANDALONE).size).toBeGreaterThan(3_000_000)
    expect(standalone).toContain(STANDALONE_MARK)
  })

  for (const family of Object.keys(docsPages) as Array<keyof typeof docsPages>)
    it(`${family}: the Worker bundle leaves the script out`, async () => {
      const { code, bytes } = await bundleFunction(`${root}functions/${family}/index.ts`, { minify: true })
      expect(bytes).toBeLessThan(standalone.length / 4)
      expect(code).not.toContain(STANDALONE_MARK)
    })

  it('the pages reference only their own origin: their document and their script, next to the page', async () => {
    for (const [family, app] of [['docs', docsApp], ['backend', backendApp]] as const) {
      const page = docsPages[family]
      const res = await app.request(page)
      expect(res.status).toBe(200)
      const html = await res.text()
      const { local, absolute } = referencedUrls(html)
      expect(absolute, `${page} names another host`).toEqual([])
      expect(local).toEqual([docsScriptPath(page)])
      const docPath = family === 'docs' ? '/api/openapi.json' : '/openapi.json'
      expect(html).toContain(`"url": "${docPath}"`)
      // The document names its page, ahead of the error catalogue.
      const doc = await (await createWorker(app).request(docPath, {}, { APP_ORIGIN: 'http://localhost:3000' })).json()
      expect(doc.info.description).toMatch(new RegExp(`^Browse this document at \`${page}\`.*works offline\.\n\nErrors are`))
    }
  })

  it('npm run build copies it where wrangler.toml points each Worker\'s assets', () => {
    const wrangler = readFileSync(`${root}wrangler.toml`, 'utf8')
    for (const family of Object.keys(docsPages) as Array<keyof typeof docsPages>) {
      const file = copyDocsScript(join(assetsRoot, 'dist'), family)!
      expect(file).toBe(join(assetsRoot, 'dist/assets', family, docsScriptPath(docsPages[family])))
      expect(readFileSync(file, 'utf8')).toBe(standalone)
      expect(wrangler).toContain(`assets = { directory = "dist/assets/${family}", binding = "ASSETS" }`)
    }
    // `/api/docs*` sends the script's path (/api/docs/scalar.js) to the docs Worker, whose assets answer it first.
    expect(wrangler).toContain('{ pattern = "app.example.com/api/docs*", zone_name = "example.com" }')
    expect(copyDocsScript(join(assetsRoot, 'dist'), 'keys')).toBeUndefined()
  })

  it('in workerd: served by the assets before the Worker, and through ASSETS when the Worker runs first', async () => {
    const { code } = await bundleFunction(`${root}functions/docs/index.ts`)
    copyDocsScript(join(assetsRoot, 'dist'), 'docs')
    const worker = (invokeWorkerFirst: boolean, binding?: string) =>
      new Miniflare({
        modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }],
        compatibilityDate: '2026-04-01',
        bindings: { APP_ORIGIN: 'http://localhost:3000' },
        assets: {
          directory: join(assetsRoot, 'dist/assets/docs'),
          binding,
          routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: invokeWorkerFirst },
        },
      })
    // Deployed as configured (assets first), and with the Worker first: the Worker hands the request to ASSETS.
    for (const first of [false, true]) {
      const mf = worker(first, 'ASSETS')
      open.push(mf)
      const script = await mf.dispatchFetch('http://localhost/api/docs/scalar.js')
      expect(script.status, `worker first: ${first}`).toBe(200)
      expect(script.headers.get('content-type')).toMatch(/javascript/)
      expect(await script.text()).toBe(standalone)
      const page = await mf.dispatchFetch('http://localhost/api/docs')
      expect(await page.text()).toContain('<script src="/api/docs/scalar.js">')
    }
    // The Worker first with no binding to hand it to: 404, so the 200 above did come through the Worker.
    const unbound = worker(true)
    open.push(unbound)
    const res = await unbound.dispatchFetch('http://localhost/api/docs/scalar.js')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Not found', code: 'NOT_FOUND' })
  })

  it('in workerd with no assets configured at all: 404, never a crash', async () => {
    const { code } = await bundleFunction(`${root}functions/docs/index.ts`)
    const mf = new Miniflare({ modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }], compatibilityDate: '2026-04-01', bindings: { APP_ORIGIN: 'http://localhost:3000' } })
    open.push(mf)
    const res = await mf.dispatchFetch('http://localhost/api/docs/scalar.js')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'Not found', code: 'NOT_FOUND' })
  })

  it('on the local server: each listener answers its page\'s script from node_modules', async () => {
    const web = createRouter().route('/', docsApp)
    const backend = createRouter().route('/', backendApp)
    serveDocsScripts({ docs: web, backend })
    for (const [app, page] of [[web, docsPages.docs], [backend, docsPages.backend]] as const) {
      const res = await app.request(docsScriptPath(page))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
      expect(await res.text()).toBe(standalone)
    }
    // Only the page's own script path: the web listener does not answer the backend page's.
    expect((await web.request(docsScriptPath(docsPages.backend))).status).toBe(404)
  })
})
