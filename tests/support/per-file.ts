import { afterAll, vi } from 'vitest'

// Runs around every test file. Files of the harness suites share a module graph and a process (vitest.config.ts),
// so what a file changes globally ends with it: fake timers (a test that failed before restoring them) and
// environment variables.
const env = { ...process.env }

afterAll(() => {
  vi.useRealTimers()
  vi.unstubAllEnvs()
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key]
  Object.assign(process.env, env)
})
