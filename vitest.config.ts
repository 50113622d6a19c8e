import { defineConfig } from 'vitest/config'

// Suites built on the harness run twice: on embedded stores (PGlite, in-process kv), and, when CI
// provides them, on real Postgres (through the Neon driver) and real Redis (through Upstash REST).
const harnessSuites = ['tests/families/**/*.test.ts', 'tests/isolation/**/*.test.ts', 'tests/http/**/*.test.ts']
const integration = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)

const shared = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  globalSetup: ['tests/support/global-setup.ts'],
  setupFiles: ['tests/support/per-file.ts'],
}
// The harness suites share one module graph per worker (`isolate: false`): each builds its own stores and apps
// (fresh databases, fresh users), and evaluating every family's modules again for each file cost more than
// half the suite's time. The other suites (servers, workers, queues, docs) keep a fresh graph per file.
const sharedGraph = { isolate: false }

export default defineConfig({
  test: {
    // 2-core machines: a few files at a time, each with its own database
    maxWorkers: 2,
    projects: [
      { test: { ...shared, ...sharedGraph, name: 'embedded', include: harnessSuites } },
      { test: { ...shared, name: 'standalone', include: ['tests/**/*.test.ts'], exclude: harnessSuites } },
      ...(integration
        ? [{ test: { ...shared, ...sharedGraph, name: 'integration', include: harnessSuites, env: { TEST_STORES: 'real' } } }]
        : []),
    ],
  },
})
