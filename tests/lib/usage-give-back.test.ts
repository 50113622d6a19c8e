import { describe, expect, it, vi } from 'vitest'
import type { Reader } from '../../lib/db/rls'
import { spendUnits } from '../../lib/billing/usage'
import { DependencyUnavailableError, unavailableDependency } from '../../lib/http/dependency'
import type { Kv } from '../../lib/kv/types'

// A spend takes today's allowance in kv, then the rest from credits in the database. When the database fails the
// allowance is given back; should the kv store fail that give-back too, the answer is still the database's failure.
describe('spendUnits when the database fails after the allowance was taken', () => {
  const dbDown = new Error('Connection terminated unexpectedly')
  const reader = { asService: () => Promise.reject(dbDown), asUser: () => Promise.reject(dbDown) } as unknown as Reader

  it('the allowance is given back and the database error is what is thrown', async () => {
    const incr = vi.fn(async () => 0)
    const kv = { eval: async () => [100, 600], incr } as unknown as Kv
    const err = await spendUnits({ kv, reader }, 'u1', 'solo', 150).catch((e: unknown) => e)
    expect(err).toBe(dbDown)
    expect(incr).toHaveBeenCalledWith(expect.stringMatching(/^usage:u1:/), -100, expect.any(Number))
  })

  it('a give-back the kv store refuses too is logged, and the database error still answers (503 DATABASE_UNAVAILABLE)', async () => {
    const errorLine = vi.spyOn(console, 'error').mockImplementation(() => {})
    const kv = { eval: async () => [100, 600], incr: () => Promise.reject(new DependencyUnavailableError('kv')) } as unknown as Kv
    const err = await spendUnits({ kv, reader }, 'u1', 'solo', 150).catch((e: unknown) => e)
    expect(err).toBe(dbDown)
    expect(unavailableDependency(err)).toBe('database')
    expect(JSON.parse(String(errorLine.mock.calls[0][0]))).toMatchObject({ event: 'usage.allowance_not_given_back', userId: 'u1', units: 100 })
    errorLine.mockRestore()
  })
})
