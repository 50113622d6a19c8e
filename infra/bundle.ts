import { build, type Plugin } from 'esbuild'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { copyDocsScript } from './static-assets'

const root = fileURLToPath(new URL('..', import.meta.url))

/** Every deployable function: `functions/<family>/index.ts`, one Worker each. */
export function functionEntries(): Array<{ family: string; entry: string }> {
  return readdirSync(`${root}/functions`, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(`${root}/functions/${d.name}/index.ts`))
    .map((d) => ({ family: d.name, entry: `${root}/functions/${d.name}/index.ts` }))
}

/**
 * A rewrite of a dependency's internals: the plugin, and what it was checked against. tests/infra/bundle-rewrites.test.ts
 * holds each to the installed packages: `pkg` must be at `version` (an upgrade fails the test until the rewrite is
 * checked again), every file of `importers` (paths under node_modules/) must still import a specifier the rewrite
 * matches, every file of `replaces` must still exist, and a bundle must resolve through the rewrite and leave
 * `replaces` out.
 */
export interface Rewrite {
  name: string
  specifier: RegExp
  /** Only imports from a file whose path contains this. */
  within: string
  plugin: Plugin
  checked: { pkg: string; version: string; importers: string[]; replaces: string[] }
}

/** Replaces a module a dependency imports (by the specifier it uses, from a file under `within`) with `contents`. */
function replaceModule(name: string, specifier: RegExp, within: string, contents: string, checked: Rewrite['checked']): Rewrite {
  const plugin: Plugin = {
    name,
    setup(b) {
      b.onResolve({ filter: specifier }, (args) => (args.importer.includes(within) ? { path: args.path, namespace: name } : undefined))
      b.onLoad({ filter: /.*/, namespace: name }, () => ({ contents, resolveDir: root }))
    },
  }
  return { name, specifier, within, plugin, checked }
}

/**
 * Resolves a dependency's own relative import (by the specifier it uses, from a file under `within`) to another file
 * of the same folder, `file`, in place of the one its `browser` field names (`checked.replaces`).
 */
function useSibling(name: string, specifier: RegExp, within: string, file: string, checked: Rewrite['checked']): Rewrite {
  const plugin: Plugin = {
    name,
    setup(b) {
      b.onResolve({ filter: specifier }, (args) => (args.importer.includes(within) ? { path: join(dirname(args.importer), file) } : undefined))
    },
  }
  return { name, specifier, within, plugin, checked }
}

/**
 * What the Workers never run, left out of their bundles (bench/ measures each; every function stays under
 * 250 KB gzipped):
 * - zod's `z` namespace re-exports every locale (~38 KB gz) and @hono/zod-openapi passes `z` around as a value,
 *   so no bundler drops them: the API answers in English, only `en` is kept;
 * - zod's JSON Schema to zod converter (`z.fromJSONSchema`, ~5 KB gz), which nothing calls, and its opt-in schema
 *   compiler (`z.compile`, ~6 KB gz), which builds parsers with `new Function`, refused by workerd anyway;
 * - zod's zod to JSON Schema writer (`z.toJSONSchema`, `schema.toJSONSchema()`, ~2.6 KB gz): the OpenAPI document
 *   is written by @asteasolutions/zod-to-openapi, which never calls it, and by `npm run gen:openapi` in Node;
 * - SimpleWebAuthn's attestation certificate-chain checks (@peculiar/x509, asn1js, CRL fetches: ~28 KB gz).
 *   Registration asks for attestation `none`, which browsers honour by sending no certificates; an attestation
 *   that still carries a chain is refused (the stub throws), never trusted unchecked.
 * And one that makes a library run at all:
 * - the AWS SDK's XML parser for browsers is built on `DOMParser`, which workerd does not have: its own parser
 *   (plain JavaScript, what Node runs) reads S3's answers instead.
 */
export const workerRewrites: Rewrite[] = [
  replaceModule('zod-english-only', /^\.\.\/locales\/index\.js$/, '/node_modules/zod/', `export { default as en } from 'zod/v4/locales/en.js'`, {
    pkg: 'zod',
    version: '4.6.7',
    importers: ['zod/v4/classic/external.js', 'zod/v4/core/index.js', 'zod/v4/mini/external.js'],
    replaces: ['zod/v4/locales/index.js'],
  }),
  replaceModule(
    'zod-without-from-json-schema',
    /from-json-schema\.js$/,
    '/node_modules/zod/',
    `export function fromJSONSchema() { throw new Error('z.fromJSONSchema is not bundled') }`,
    { pkg: 'zod', version: '4.6.7', importers: ['zod/v4/classic/external.js'], replaces: ['zod/v4/classic/from-json-schema.js'] },
  ),
  replaceModule(
    'zod-without-to-json-schema',
    /^(?:\.\.\/core|\.)\/to-json-schema\.js$/,
    '/node_modules/zod/',
    `const unavailable = () => { throw new Error('z.toJSONSchema is not bundled') }
    export { unavailable as initializeContext, unavailable as handleUnrepresentable, unavailable as processSchema, unavailable as process, unavailable as extractDefs, unavailable as finalize }
    export const createToJSONSchemaMethod = () => unavailable
    export const createStandardJSONSchemaMethod = () => unavailable`,
    {
      pkg: 'zod',
      version: '4.6.7',
      importers: ['zod/v4/classic/schemas.js', 'zod/v4/core/index.js', 'zod/v4/core/json-schema-generator.js', 'zod/v4/core/json-schema-processors.js'],
      replaces: ['zod/v4/core/to-json-schema.js'],
    },
  ),
  replaceModule(
    'zod-without-compile',
    /^\.\/compile\.js$/,
    '/node_modules/zod/v4/core/',
    `const unavailable = () => { throw new Error('z.compile is not bundled: workerd refuses new Function') }
    export const INVALID = Symbol.for('zod.compile.invalid')
    export class ZodCompileAsyncError extends Error {}
    export class ZodCompileUnsupportedError extends Error {}
    export { unavailable as compile, unavailable as withParser, unavailable as compileFn }`,
    { pkg: 'zod', version: '4.6.7', importers: ['zod/v4/core/index.js'], replaces: ['zod/v4/core/compile.js'] },
  ),
  replaceModule(
    'webauthn-without-certificate-chains',
    /(^|\/)(validateCertificatePath|isCertRevoked)\.js$/,
    '/node_modules/@simplewebauthn/server/',
    `const refuse = () => Promise.reject(new Error('attestation certificate chains are refused: attestation none is requested'))
    export { refuse as validateCertificatePath, refuse as isCertRevoked }`,
    {
      pkg: '@simplewebauthn/server',
      version: '14.0.3',
      importers: [
        'esm/helpers/index.js',
        'esm/helpers/validateCertificatePath.js',
        'esm/metadata/verifyAttestationWithMetadata.js',
        'esm/metadata/verifyMDSBlob.js',
        'esm/registration/verifications/tpm/verifyAttestationTPM.js',
        'esm/registration/verifications/verifyAttestationAndroidKey.js',
        'esm/registration/verifications/verifyAttestationAndroidSafetyNet.js',
        'esm/registration/verifications/verifyAttestationApple.js',
        'esm/registration/verifications/verifyAttestationFIDOU2F.js',
        'esm/registration/verifications/verifyAttestationPacked.js',
      ].map((f) => `@simplewebauthn/server/${f}`),
      replaces: ['@simplewebauthn/server/esm/helpers/validateCertificatePath.js', '@simplewebauthn/server/esm/helpers/isCertRevoked.js'],
    },
  ),
  useSibling('aws-xml-without-dom-parser', /^\.\/xml-parser$/, '/node_modules/@aws-sdk/xml-builder/', 'xml-parser.js', {
    pkg: '@aws-sdk/xml-builder',
    version: '3.972.43',
    importers: ['@aws-sdk/xml-builder/dist-es/index.js'],
    replaces: ['@aws-sdk/xml-builder/dist-es/xml-parser.browser.js'],
  }),
]
export const workerBuildPlugins: Plugin[] = workerRewrites.map((r) => r.plugin)

/**
 * @asteasolutions/zod-to-openapi's document generators (~5.7 KB gz), which @hono/zod-openapi imports for
 * `getOpenAPIDocument`: only a function that serves an OpenAPI document calls it, through lib/http/openapi-docs.ts.
 * Every other function gets generators that throw; one whose bundle holds that module is built again with them.
 */
const DOCUMENT_MODULE = 'lib/http/openapi-docs.ts'
export const withoutDocumentGenerators = replaceModule(
  'openapi-without-document-generators',
  /^@asteasolutions\/zod-to-openapi$/,
  '/node_modules/@hono/zod-openapi/',
  `export { OpenAPIRegistry, extendZodWithOpenApi, getOpenApiMetadata } from '@asteasolutions/zod-to-openapi'
  class Unavailable { constructor() { throw new Error('the OpenAPI document generators are bundled only with ${DOCUMENT_MODULE}') } }
  export { Unavailable as OpenApiGeneratorV3, Unavailable as OpenApiGeneratorV31 }`,
  { pkg: '@hono/zod-openapi', version: '1.6.3', importers: ['@hono/zod-openapi/dist/index.mjs'], replaces: [] },
)

/**
 * Bundles one function the way Wrangler does for workerd: ESM, browser/worker conditions, no Node
 * built-ins available, so a Node-only import anywhere under it fails the build.
 */
export async function bundleFunction(entry: string | { contents: string }, opts: { minify?: boolean } = {}) {
  let result = await bundle(entry, opts, [...workerBuildPlugins, withoutDocumentGenerators.plugin])
  if (Object.keys(result.metafile!.inputs).some((file) => file.endsWith(DOCUMENT_MODULE))) result = await bundle(entry, opts, workerBuildPlugins)
  const code = result.outputFiles[0].text
  // `inputs`: what went into the bundle (a rewritten module appears as `<rewrite name>:<specifier>`).
  return { code, bytes: Buffer.byteLength(code), gzipBytes: gzipSync(code).byteLength, inputs: Object.keys(result.metafile!.inputs) }
}

function bundle(entry: string | { contents: string }, opts: { minify?: boolean }, plugins: Plugin[]) {
  return build({
    // A module's source (bench/import-cost.ts) resolves its imports from the project root.
    ...(typeof entry === 'string' ? { entryPoints: [entry] } : { stdin: { contents: entry.contents, resolveDir: root, loader: 'ts' as const } }),
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
    metafile: true,
    plugins,
  })
}

/**
 * Every function, or the named ones, minified into `<outDir>/<family>.js`, and their static assets into
 * `<outDir>/assets/<family>/`: what `wrangler deploy` uploads (`npm run build` into dist/, and the workerd journeys).
 */
export async function buildFunctions(outDir: string, wanted: string[] = [], report: (line: string) => void = () => {}) {
  mkdirSync(outDir, { recursive: true })
  const built: Array<{ family: string; file: string; gzipBytes: number }> = []
  for (const { family, entry } of functionEntries()) {
    if (wanted.length && !wanted.includes(family)) continue
    const { code, gzipBytes } = await bundleFunction(entry, { minify: true })
    const file = join(outDir, `${family}.js`)
    writeFileSync(file, code)
    built.push({ family, file, gzipBytes })
    report(`${file.slice(root.length)} ${(gzipBytes / 1024).toFixed(1)} KB gz`)
    // A docs page's script ships as the Worker's static asset (wrangler.toml `assets`), never in its bundle.
    const asset = copyDocsScript(outDir, family)
    if (asset) report(`${asset.slice(root.length)} (static asset)`)
  }
  return built
}

/** `npm run build` (wrangler's build step): every function, or the named ones, into dist/. */
if (import.meta.url === `file://${process.argv[1]}`) {
  await buildFunctions(`${root}/dist`, process.argv.slice(2), (line) => console.log(line))
}
