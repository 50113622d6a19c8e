import { describe, expect, it } from 'vitest'
import { scanSkill } from '../../lib/skills/scan'
import { CORPUS } from './corpus'

describe('the skill scanner on its corpus', () => {
  it('holds at least 60 skills across every tier the scanner answers, ids unique', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60)
    expect(new Set(CORPUS.map((c) => c.id)).size).toBe(CORPUS.length)
    expect(new Set(CORPUS.map((c) => c.tier))).toEqual(new Set(['verified', 'review', 'blocked']))
  })

  it.each(CORPUS.map((c) => [c.id, c] as const))('%s', (_id, entry) => {
    const scan = scanSkill(entry)
    const detail = JSON.stringify(scan)
    expect(scan.trustTier, detail).toBe(entry.tier)
    if (entry.risk) expect(scan.riskLevel, detail).toBe(entry.risk)
    if (entry.reason) expect(scan.reasons.some((r) => r.includes(entry.reason!)), detail).toBe(true)
    if (entry.warning) expect(scan.warnings.some((w) => w.includes(entry.warning!)), detail).toBe(true)
    // the table: blocked ⇔ reasons ⇔ not installable; review with warnings ⇔ manual review
    expect(scan.installAllowed).toBe(scan.trustTier !== 'blocked')
    expect(scan.reasons.length > 0).toBe(scan.trustTier === 'blocked')
    expect(scan.riskLevel === 'blocked').toBe(scan.trustTier === 'blocked')
    expect(scan.requiresManualReview).toBe(scan.trustTier === 'review' && scan.warnings.length > 0)
    if (scan.trustTier === 'verified') expect(scan).toMatchObject({ riskLevel: 'low', warnings: [] })
  })
})

describe('the scanner’s contract', () => {
  it('never answers trusted, whatever the input', () => {
    for (const entry of CORPUS) expect(scanSkill(entry).trustTier).not.toBe('trusted')
  })

  it('is pure: the same input gives the same scan, and it fetches nothing', async () => {
    const calls: unknown[] = []
    const realFetch = globalThis.fetch
    globalThis.fetch = ((...a: unknown[]) => (calls.push(a), Promise.reject(new Error('no network')))) as typeof fetch
    try {
      for (const entry of CORPUS) expect(scanSkill(entry)).toEqual(scanSkill(entry))
    } finally {
      globalThis.fetch = realFetch
    }
    expect(calls).toEqual([])
  })

  it('a clean skill with an https source is verified; the same without one is review at low risk', () => {
    const code = 'export const add = (a, b) => a + b'
    expect(scanSkill({ code, sourceUrl: 'https://github.com/a/b' })).toEqual({ trustTier: 'verified', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false })
    expect(scanSkill({ code })).toEqual({ trustTier: 'review', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false })
  })

  it('deeply nested code parses without exhausting the stack; 2000 characters scan quickly', () => {
    const deep = `${'['.repeat(900)}${']'.repeat(900)}`
    expect(scanSkill({ code: deep }).trustTier).toBe('review')
    const long = `export const xs = [${Array.from({ length: 400 }, (_, i) => i).join(',')}]`.slice(0, 2000)
    const t = performance.now()
    for (let i = 0; i < 50; i++) scanSkill({ code: long })
    expect((performance.now() - t) / 50).toBeLessThan(20)
  })
})
