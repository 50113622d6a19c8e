// Fake agent runtimes for bench/watchdog.ts, in a process of their own as the embedded default's runtimes are (and a
// deployment's are on other machines): started with `fork`, they answer the documented healthy probes and send their
// URLs to the parent, then run until it disconnects.
import { HEALTHY, startFakeRuntime } from '../tests/support/fake-runtime'

const count = Number(process.argv[2] ?? 4)
const runtimes = await Promise.all(
  Array.from({ length: count }, () => startFakeRuntime({ '/healthz': HEALTHY.healthz, '/readyz': HEALTHY.readyz, '/api/status': HEALTHY.status() })),
)
process.send!({ urls: runtimes.map((r) => r.url) })
process.on('disconnect', () => void Promise.all(runtimes.map((r) => r.close())).then(() => process.exit(0)))
