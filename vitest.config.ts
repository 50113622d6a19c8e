import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // 2-core machines: a few files at a time, each with its own embedded database
    maxWorkers: 2,
    reporters: ['default'],
  },
})
