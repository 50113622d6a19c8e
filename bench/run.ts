// `npm run bench`: every figure beside a limit measured in the same run, as a ratio: (1) reads through the local
// server against a bare Hono route, and on a real Postgres (BENCH_DATABASE_URL or DATABASE_URL) the keys list
// against pgbench running its transaction; (2) the gateway against its upstream called directly; (3) bundle sizes
// against the Workers limit; then password hashing, cold starts over a trivial Worker, import costs, the watchdog and
// the classifier. Prints figures; asserts nothing. BENCH_SECONDS (default 4) sets each load's length.
import { Miniflare } from 'miniflare'
import { availableParallelism } from 'node:os'
import { bundleFunction, functionEntries } from '../infra/bundle'
import { classifyBench } from './classify'
import { coldStarts } from './cold-start'
import { gatewayCosts } from './gateway'
import { importCosts } from './import-cost'
import { signedInReads } from './reads'
import { watchdogSweeps } from './watchdog'

/** A Worker bundle's limit (gzipped), which every function must stay under. */
const BUNDLE_LIMIT_KB = 250

console.log(`machine: ${availableParallelism()} cores, ${process.version}`)
await signedInReads()
await gatewayCosts()

console.log('bundle size (minified, gzipped):')
const sizes: number[] = []
for (const { family, entry } of functionEntries()) {
  const { gzipBytes, bytes } = await bundleFunction(entry, { minify: true })
  sizes.push(gzipBytes)
  console.log(`  ${family.padEnd(12)} ${(gzipBytes / 1024).toFixed(1).padStart(7)} KB gz  (${(bytes / 1024).toFixed(0)} KB raw)`)
}
sizes.sort((a, b) => a - b)
const median = sizes[Math.floor((sizes.length - 1) / 2)]
const largest = sizes[sizes.length - 1] / 1024
console.log(`  median ${(median / 1024).toFixed(1)} KB gz, largest ${largest.toFixed(1)} KB gz: ${(largest / BUNDLE_LIMIT_KB).toFixed(3)} of the ${BUNDLE_LIMIT_KB} KB limit`)

// (3) The password hash's CPU cost where it runs in production: hash + verify per request in workerd.
console.log('password hashing in workerd (bcrypt hash + verify, median of 5):')
const { code } = await bundleFunction(new URL('./password-worker.ts', import.meta.url).pathname)
const mf = new Miniflare({ modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }], compatibilityDate: '2026-04-01' })
for (const cost of [4, 10, 12]) {
  const times: number[] = []
  for (let i = 0; i < 5; i++) {
    const t = performance.now()
    await (await mf.dispatchFetch(`http://bench/?cost=${cost}`)).text()
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  console.log(`  cost ${String(cost).padStart(2)}: ${(times[2] / 2).toFixed(0).padStart(4)} ms per hash or check`)
}
await mf.dispose()

// (4) Cold start of every function in workerd, and (5) what each heavy import costs.
await coldStarts()
await importCosts()

// (6) The watchdog sweeping 1k and 10k agents on loopback fake runtimes (100k: npm run bench:watchdog).
await watchdogSweeps([1000, 10_000])

// (7) The tool-call classifier: latency per call on its corpus, and its bundle cost.
await classifyBench()
process.exit(0)
