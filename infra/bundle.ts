import { build } from 'esbuild'
import { readdirSync, existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

const root = fileURLToPath(new URL('..', import.meta.url))

/** Every deployable function: `functions/<family>/index.ts`, one Worker each. */
export function functionEntries(): Array<{ family: string; entry: string }> {
  return readdirSync(`${root}/functions`, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(`${root}/functions/${d.name}/index.ts`))
    .map((d) => ({ family: d.name, entry: `${root}/functions/${d.name}/index.ts` }))
}

/**
 * Bundles one function the way Wrangler does for workerd: ESM, browser/worker conditions, no Node
 * built-ins available, so a Node-only import anywhere under it fails the build.
 */
export async function bundleFunction(entry: string, opts: { minify?: boolean } = {}) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    minify: opts.minify ?? false,
    logLevel: 'silent',
    legalComments: 'none',
  })
  const code = result.outputFiles[0].text
  return { code, bytes: Buffer.byteLength(code), gzipBytes: gzipSync(code).byteLength }
}
