// The docs pages' renderer script (Scalar's standalone bundle, ~4.3 MB) outside any Worker bundle: served from
// node_modules by the local server, copied by `npm run build` into each docs Worker's static assets.
import { copyFileSync, mkdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { Hono } from 'hono'
import { docsScriptPath } from '../lib/http/openapi-docs'

/** @scalar/api-reference's `browser` bundle, found from its main entry (its exports map does not expose the path). */
export const SCALAR_STANDALONE = join(dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js')

/** Each function with a docs page, and the page's path: wrangler.toml gives it `assets = { directory = "dist/assets/<family>" }`. */
export const docsPages = { docs: '/api/docs', backend: '/docs' } as const

/** Where the build (into `outDir`, dist/ for wrangler) puts a function's copy of the script: the file's path under the directory is its URL path. */
export const docsAssetFile = (outDir: string, family: keyof typeof docsPages) => join(outDir, 'assets', family, docsScriptPath(docsPages[family]))

/** The build step for `family`'s static assets under the build's `outDir` (none unless it has a docs page): returns the file it wrote. */
export function copyDocsScript(outDir: string, family: string): string | undefined {
  if (!(family in docsPages)) return undefined
  const file = docsAssetFile(outDir, family as keyof typeof docsPages)
  mkdirSync(dirname(file), { recursive: true })
  copyFileSync(SCALAR_STANDALONE, file)
  return file
}

let script: Promise<string> | undefined

/**
 * The local server's stand-in for the Workers' static assets: each app answers its page's script from
 * node_modules (read once). Registered after the routes, it is reached because serveDocument's handler passes on
 * when there is no ASSETS binding.
 */
export function serveDocsScripts(apps: Record<keyof typeof docsPages, Hono<any>>) {
  for (const [family, app] of Object.entries(apps) as Array<[keyof typeof docsPages, Hono<any>]>)
    app.get(docsScriptPath(docsPages[family]), async (c) =>
      c.body(await (script ??= readFile(SCALAR_STANDALONE, 'utf8')), 200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=3600',
      }),
    )
}
