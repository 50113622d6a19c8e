// Cold start of each function in workerd: from loading the bundle to its first answer (a 404 through the whole
// shared stack, so no store is needed), minus the same for a trivial Worker. Median of several runs.
import { Miniflare } from 'miniflare'
import { bundleFunction, functionEntries } from '../infra/bundle'

const RUNS = Number(process.env.COLD_START_RUNS ?? 5)
const TRIVIAL = 'export default { fetch: () => new Response("ok") }'

async function firstAnswerMs(code: string) {
  const started = performance.now()
  const mf = new Miniflare({
    modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }],
    compatibilityDate: '2026-04-01',
    bindings: { APP_ORIGIN: 'http://localhost:3000', SESSION_SECRET: 'bench', LOG_REQUESTS: '0' },
  })
  await (await mf.dispatchFetch('http://localhost/__cold-start')).arrayBuffer()
  const ms = performance.now() - started
  await mf.dispose()
  return ms
}

async function median(code: string) {
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) times.push(await firstAnswerMs(code))
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

let trivialMs: number | undefined
/** Cold start of `code` minus a trivial Worker's, in ms (the trivial one measured once per run). */
export async function coldStartOverTrivial(code: string) {
  trivialMs ??= await median(TRIVIAL)
  return (await median(code)) - trivialMs
}

export async function coldStarts() {
  console.log(`cold start in workerd (median of ${RUNS}, against a trivial Worker measured in this run):`)
  const trivial = (trivialMs ??= await median(TRIVIAL))
  console.log(`  trivial Worker ${trivial.toFixed(0).padStart(5)} ms to first answer`)
  for (const { family, entry } of functionEntries()) {
    const { code } = await bundleFunction(entry, { minify: true })
    const over = await coldStartOverTrivial(code)
    console.log(`  ${family.padEnd(12)} ${over.toFixed(0).padStart(5)} ms over trivial   ${((over + trivial) / trivial).toFixed(2)}x the trivial Worker`)
  }
}
