// The tool-call classifier on the test corpus (tests/hooks/corpus.ts): every command classified many times, each
// call timed on its own; prints p50/p99/max per call in µs, the slowest commands, and what the classifier adds to
// a Worker bundle. `npx tsx bench/classify.ts` alone, or part of `npm run bench`. Asserts nothing.
import { bundleFunction } from '../infra/bundle'
import { classifyToolCall } from '../functions/permissions/hooks/classify'
import { corpus } from '../tests/hooks/corpus'

const ROUNDS = Number(process.env.CLASSIFY_ROUNDS ?? 50)

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]

export async function classifyBench() {
  // Warm up (JIT), then measure.
  for (const { command } of corpus) classifyToolCall('bash', { command })
  const times: number[] = []
  const perCommand = new Map<string, number>()
  for (let round = 0; round < ROUNDS; round++)
    for (const { command } of corpus) {
      const start = performance.now()
      classifyToolCall('bash', { command })
      const us = (performance.now() - start) * 1000
      times.push(us)
      perCommand.set(command, Math.max(perCommand.get(command) ?? 0, us))
    }
  times.sort((a, b) => a - b)
  const fmt = (us: number) => `${us.toFixed(1).padStart(8)} µs`
  console.log(`tool-call classifier: ${corpus.length} corpus commands × ${ROUNDS} rounds (${times.length} calls)`)
  console.log(`  p50 ${fmt(percentile(times, 50))}   p90 ${fmt(percentile(times, 90))}   p99 ${fmt(percentile(times, 99))}   max ${fmt(times[times.length - 1])}`)
  const slowest = [...perCommand].sort((a, b) => b[1] - a[1]).slice(0, 3)
  for (const [command, us] of slowest) console.log(`  slowest: ${fmt(us)}  ${JSON.stringify(command.length > 60 ? `${command.slice(0, 60)}… (${command.length} chars)` : command)}`)

  const trivial = await bundleFunction({ contents: 'export default { fetch: () => new Response("ok") }' }, { minify: true })
  const withClassifier = await bundleFunction(
    { contents: `import { classifyToolCall } from './functions/permissions/hooks/classify'; export default { fetch: async (r) => Response.json(classifyToolCall('bash', await r.json())) }` },
    { minify: true },
  )
  console.log(`  bundle cost in a Worker (classifier + unbash, minified): ${((withClassifier.gzipBytes - trivial.gzipBytes) / 1024).toFixed(1)} KB gz (${(withClassifier.bytes / 1024).toFixed(0)} KB raw)`)
}

if (import.meta.url === `file://${process.argv[1]}`) await classifyBench()
