import { describe, expect, it } from 'vitest'
import { integrationConfigured } from './support/stores'

// Makes a missing integration run visible in every test report instead of passing silently.
const reason = 'skipped: TEST_DATABASE_URL and TEST_REDIS_URL not set (CI sets them; see .ci/run)'
if (!integrationConfigured) console.warn(`integration suites on real Postgres and Redis ${reason}`)

describe('integration suites on real Postgres and Redis', () => {
  it.skipIf(!integrationConfigured)(integrationConfigured ? 'are configured and run as the "integration" project' : reason, () => {
    expect(process.env.TEST_DATABASE_URL).toMatch(/^postgres(ql)?:\/\//)
    expect(process.env.TEST_REDIS_URL).toMatch(/^rediss?:\/\//)
  })
})
