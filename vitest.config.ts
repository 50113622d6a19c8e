import { defineConfig } from 'vitest/config'

// Suites built on the harness run twice: on embedded stores (PGlite, in-process kv), and, when CI
// provides them, on real Postgres (through the Neon driver) and real Redis (through Upstash REST).
const harnessSuites = ['tests/families/**/*.test.ts', 'tests/isolation/**/*.test.ts', 'tests/http/**/*.test.ts']
const integration = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)

const shared = { testTimeout: 30_000, hookTimeout: 60_000, globalSetup: ['tests/support/global-setup.ts'] }

export default defineConfig({
  test: {
    // 2-core machines: a few files at a time, each with its own database
    maxWorkers: 2,
    projects: [
      { test: { ...shared, name: 'embedded', include: ['tests/**/*.test.ts'] } },
      ...(integration
        ? [{ test: { ...shared, name: 'integration', include: harnessSuites, env: { TEST_STORES: 'real' } } }]
        : []),
    ],
  },
})
