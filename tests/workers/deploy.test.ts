// `wrangler deploy --dry-run --env <family>` for every environment of wrangler.toml, offline: what wrangler would
// upload is the bundle buildFunctions writes (the one the workerd tests run), byte for byte, with the bindings the
// environment declares (vars, Durable Objects, assets), and every Durable Object resolves: a class bound from
// another Worker is defined there, a class a Worker defines has a migration and is exported by its bundle.
//
// One build into a temporary directory, then wrangler there, against a copy of wrangler.toml without its `[build]`
// table (which would run `npm run build` into the project's dist/ on every dry run). `--outfile` writes the request
// body wrangler would send (multipart: the metadata, then the modules), which the test reads back.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { experimental_readRawConfig } from 'wrangler'
import { buildFunctions } from '../../infra/bundle'
import { docsAssetFile, docsPages } from '../../infra/static-assets'
import { mapLimit } from '../../lib/watchdog/deps'

const root = new URL('../../', import.meta.url).pathname

/** The fields of a wrangler environment this test reads. */
interface DurableObjectBinding {
  name: string
  class_name: string
  script_name?: string
}
interface Migration {
  tag: string
  new_classes?: string[]
  new_sqlite_classes?: string[]
  renamed_classes?: Array<{ from: string; to: string }>
  deleted_classes?: string[]
}
interface WorkerEnv {
  name: string
  main: string
  vars?: Record<string, unknown>
  durable_objects?: { bindings?: DurableObjectBinding[] }
  assets?: { directory: string; binding?: string }
  migrations?: Migration[]
}
interface RawConfig extends Partial<WorkerEnv> {
  compatibility_date: string
  build?: { command?: string }
  env: Record<string, WorkerEnv>
}

/** A binding as the upload's metadata names it. */
type Binding = { name: string; type: string } & Record<string, unknown>

interface DryRun {
  code: number
  stdout: string
  stderr: string
  metadata: { main_module: string; bindings: Binding[]; compatibility_date: string }
  /** The upload's other parts: the modules, by name. */
  modules: Map<string, Buffer>
}

const { rawConfig } = experimental_readRawConfig({ config: join(root, 'wrangler.toml') }) as unknown as { rawConfig: RawConfig }
const environments = Object.entries(rawConfig.env)
const familyOf = (env: WorkerEnv) => env.main.match(/^dist\/(.+)\.js$/)![1]

// Two wrangler processes at a time (each spends about a second of CPU, mostly loading wrangler): on two cores,
// three at a time were no faster.
const AT_ONCE = 2
const dir = mkdtempSync(join(tmpdir(), 'platform-deploy-'))
const outDir = join(dir, 'dist')
const networkLog = join(dir, 'network.log')
const built = new Map<string, string>()
const runs = new Map<string, DryRun>()

/** The request body wrangler would upload, read back as form data. */
async function readUpload(file: string) {
  const body = readFileSync(file)
  const boundary = body.subarray(2, body.indexOf('\r\n')).toString()
  const form = await new Response(body, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }).formData()
  const modules = new Map<string, Buffer>()
  let metadata: DryRun['metadata'] | undefined
  for (const [name, value] of form) {
    if (name === 'metadata') metadata = JSON.parse(value as string)
    else modules.set(name, Buffer.from(await (value as Blob).arrayBuffer()))
  }
  return { metadata: metadata!, modules }
}

function dryRun(envName: string): Promise<DryRun> {
  const upload = join(dir, 'upload', `${envName}.form`)
  const args = [join(root, 'node_modules', '.bin', 'wrangler'), 'deploy', '--dry-run', '--env', envName, '--outfile', upload]
  const env = {
    PATH: process.env.PATH,
    // wrangler's global state (credentials, metrics consent, logs) in the temporary directory, not the user's.
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, '.config'),
    // No usage metrics (sparrow.cloudflare.com) and no banner, whose update check asks the npm registry.
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
    // Node 22+ keeps wrangler's compiled code for the next process: compiling it is much of each run's time.
    NODE_COMPILE_CACHE: join(dir, 'compile-cache'),
    // Any connection that still happens is refused and written to network.log.
    NODE_OPTIONS: `--require ${join(root, 'tests', 'support', 'no-network.cjs')}`,
    NO_NETWORK_LOG: networkLog,
  }
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? ((error as { code?: number }).code ?? 1) : 0
      const out = { code, stdout: stripVTControlCharacters(stdout), stderr: stripVTControlCharacters(stderr) }
      if (code !== 0) return resolve({ ...out, metadata: { main_module: '', bindings: [], compatibility_date: '' }, modules: new Map() })
      readUpload(upload).then((read) => resolve({ ...out, ...read }), reject)
    })
  })
}

beforeAll(async () => {
  for (const { family, file } of await buildFunctions(outDir)) built.set(family, file)
  const deployable: Partial<RawConfig> = { ...rawConfig }
  delete deployable.build
  writeFileSync(join(dir, 'wrangler.json'), JSON.stringify(deployable, null, 2))
  mkdirSync(join(dir, 'upload'))
  const results = await mapLimit(environments, AT_ONCE, ([name]) => dryRun(name))
  environments.forEach(([name], i) => runs.set(name, results[i]))
}, 300_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** What the environment declares, as the upload's metadata would name it. */
function declaredBindings(env: WorkerEnv): Binding[] {
  return [
    ...Object.entries(env.vars ?? {}).map(([name, value]) =>
      typeof value === 'string' ? { name, type: 'plain_text', text: value } : { name, type: 'json', json: value },
    ),
    ...(env.durable_objects?.bindings ?? []).map(({ name, class_name, script_name }) => ({
      name,
      type: 'durable_object_namespace',
      class_name,
      ...(script_name ? { script_name } : {}),
    })),
    ...(env.assets?.binding ? [{ name: env.assets.binding, type: 'assets' }] : []),
  ]
}
const byName = (bindings: Binding[]) => [...bindings].sort((a, b) => a.name.localeCompare(b.name))

/** wrangler's warnings (`▲ [WARNING] …`), each its first line. */
const warningsOf = (stderr: string) => [...stderr.matchAll(/^▲ \[WARNING\] (.*)$/gm)].map((m) => m[1])
/** Wrangler warns that an assets Worker's routes may serve assets: by design (the docs script is an asset under a route). */
const ASSETS_ON_ROUTES = 'Warning: The following routes will attempt to serve Assets on a configured path:'

/** The classes a Worker's migrations leave defined, in order (migrations are inherited from the top level). */
function migratedClasses(env: WorkerEnv) {
  const classes = new Set<string>()
  for (const m of env.migrations ?? rawConfig.migrations ?? []) {
    for (const c of [...(m.new_classes ?? []), ...(m.new_sqlite_classes ?? [])]) classes.add(c)
    for (const { from, to } of m.renamed_classes ?? []) if (classes.delete(from)) classes.add(to)
    for (const c of m.deleted_classes ?? []) classes.delete(c)
  }
  return classes
}

/** The names a module exports (esbuild reads them; it parses a bundle faster than acorn). */
async function exportsOf(file: string) {
  const { metafile } = await build({ entryPoints: [file], write: false, metafile: true, outdir: join(dir, 'exports'), logLevel: 'silent' })
  return Object.values(metafile.outputs)[0].exports
}

describe('wrangler deploy --dry-run, every environment, offline', () => {
  it('builds every function once, for a copy of wrangler.toml without its build step', () => {
    expect(rawConfig.build).toEqual({ command: 'npm run build' })
    expect(environments.length).toBe(built.size)
  })

  for (const [name, env] of environments) {
    const family = familyOf(env)
    it(`${name}: uploads dist/${family}.js as built, with the bindings it declares`, () => {
      const run = runs.get(name)!
      expect(run.code, run.stderr || run.stdout).toBe(0)
      expect(run.stdout).toContain('--dry-run: exiting now.')
      expect(warningsOf(run.stderr).filter((w) => !(env.assets && w === ASSETS_ON_ROUTES))).toEqual([])

      // The module: the build's file, byte for byte, and nothing else (no_bundle).
      expect([...run.modules.keys()]).toEqual([`${family}.js`])
      expect(run.metadata.main_module).toBe(`${family}.js`)
      expect(run.modules.get(`${family}.js`)!.equals(readFileSync(built.get(family)!))).toBe(true)
      expect(run.metadata.compatibility_date).toBe(rawConfig.compatibility_date)

      expect(byName(run.metadata.bindings)).toEqual(byName(declaredBindings(env)))
      // Top-level vars are not inherited: each environment names APP_ORIGIN itself.
      expect(run.metadata.bindings.find((b) => b.name === 'APP_ORIGIN')).toMatchObject({ type: 'plain_text' })

      // Assets: a function with a docs page serves its script from dist/assets/<family>, which the build filled.
      if (family in docsPages) {
        expect(env.assets).toEqual({ directory: `dist/assets/${family}`, binding: 'ASSETS' })
        expect(run.stdout).toMatch(new RegExp(`Read \\d+ files from the assets directory ${outDir}/assets/${family}$`, 'm'))
        expect(existsSync(docsAssetFile(outDir, family as keyof typeof docsPages))).toBe(true)
      } else expect(env.assets).toBeUndefined()
    })
  }

  it('every Durable Object resolves: bound from the Worker that defines it, which has its migration and exports it', async () => {
    const byScript = new Map(environments.map(([, env]) => [env.name, env]))
    const problems: string[] = []
    let defined = 0
    for (const [name, env] of environments) {
      for (const b of env.durable_objects?.bindings ?? []) {
        if (b.script_name) {
          const owner = byScript.get(b.script_name)
          const ownBinding = owner?.durable_objects?.bindings?.find((o) => o.class_name === b.class_name && !o.script_name)
          if (!ownBinding) problems.push(`${name}: ${b.name} names ${b.class_name} of ${b.script_name}, which does not define it`)
          continue
        }
        defined++
        if (!migratedClasses(env).has(b.class_name)) problems.push(`${name}: ${b.class_name} has no migration`)
        // The uploaded module is the built file (checked above), so esbuild reads that.
        if (!(await exportsOf(built.get(familyOf(env))!)).includes(b.class_name)) problems.push(`${name}: its bundle does not export ${b.class_name}`)
      }
    }
    expect(problems).toEqual([])
    expect(defined).toBeGreaterThan(0)
  })

  it('every bundle that reads a Durable Object binding is deployed with it', () => {
    const names = new Set(environments.flatMap(([, env]) => (env.durable_objects?.bindings ?? []).map((b) => b.name)))
    for (const binding of names) {
      const reading = environments.filter(([, env]) => new RegExp(`["'\`]${binding}["'\`]`).test(readFileSync(built.get(familyOf(env))!, 'utf8')))
      const declaring = environments.filter(([, env]) => env.durable_objects?.bindings?.some((b) => b.name === binding))
      expect(declaring.map(([n]) => n).sort(), `${binding}: the environments declaring it, against the bundles naming it`).toEqual(reading.map(([n]) => n).sort())
    }
  })

  it('makes no network connection', () => {
    expect(existsSync(networkLog) ? readFileSync(networkLog, 'utf8') : '').toBe('')
  })
})
