import { describe, expect, it } from 'vitest'
import { scanSkill } from '../../functions/skills/scan/index'
import { CORPUS } from './corpus'

describe('the skill scanner on its corpus', () => {
  it('holds at least 180 skills across every tier the scanner answers, ids unique', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(180)
    expect(new Set(CORPUS.map((c) => c.id)).size).toBe(CORPUS.length)
    expect(new Set(CORPUS.map((c) => c.tier))).toEqual(new Set(['review', 'blocked']))
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
    if (scan.riskLevel === 'low') expect(scan).toMatchObject({ trustTier: 'review', warnings: [] })
  })
})

describe('the scanner’s contract', () => {
  it('never answers trusted or verified, whatever the input: those take the platform or an admin', () => {
    for (const entry of CORPUS) expect(['review', 'blocked']).toContain(scanSkill({ ...entry, sourceUrl: 'https://github.com/acme/skills' }).trustTier)
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

  it('an https source never raises the tier: a clean skill is review at low risk with one or without', () => {
    const code = 'export const add = (a, b) => a + b'
    const clean = { trustTier: 'review', riskLevel: 'low', installAllowed: true, reasons: [], warnings: [], requiresManualReview: false }
    expect(scanSkill({ code, sourceUrl: 'https://github.com/a/b' })).toEqual(clean)
    expect(scanSkill({ code })).toEqual(clean)
  })

  it('finding 8: the bypasses of the review are blocked (a let alias, getBuiltinModule, .constructor read but not called)', () => {
    const blockedFor = (code: string) => {
      const scan = scanSkill({ code })
      expect(scan.trustTier, code).toBe('blocked')
      return scan.reasons
    }
    expect(blockedFor("let r = require\nr(process.argv[2]).execSync('id')")).toContain(
      'Hands a module loader to code the scanner cannot follow (a let or var, a parameter, a property, an argument)',
    )
    expect(blockedFor('export const run = (m) => process.getBuiltinModule(m)')).toContain('Loads a module whose name is computed')
    expect(blockedFor("process.getBuiltinModule('child_process').execSync('id')")).toContain('Runs programs (child_process)')
    expect(blockedFor("const F = (() => {}).constructor\nF('return process')().exit()")).toContain('Reaches the Function constructor through .constructor')
  })

  it('what it cannot resolve is blocked, what it can is judged by what it is', () => {
    const tier = (code: string) => scanSkill({ code }).trustTier
    // the same shapes, once with a name it can read and once without
    expect(tier("globalThis['fetch']('https://x.example')")).toBe('review')
    expect(tier('export const f = (k) => globalThis[k]')).toBe('blocked')
    expect(tier("const r = require\nexport const _ = r('lodash')")).toBe('review')
    expect(tier("let r = require\nexport const _ = r('lodash')")).toBe('blocked')
    expect(tier("const { argv } = process\nexport const a = argv")).toBe('review')
    expect(tier('const { getBuiltinModule: g } = process\nexport const m = (n) => g(n)')).toBe('blocked')
    expect(tier('export const name = (x) => x.constructor.name')).toBe('review')
    expect(tier('export const ctor = (x) => x.constructor')).toBe('blocked')
  })

  it('names built to explode (strings doubled forty times, objects of objects) cost bounded time and memory', () => {
    let strings = "const b0 = 'ab'\n"
    for (let i = 1; i < 40; i++) strings += `const b${i} = b${i - 1} + b${i - 1}\n`
    strings += 'export const y = globalThis[b39]'
    let objects = "const a12 = 'x'\n"
    for (let i = 11; i >= 0; i--) objects += `const a${i} = {p: a${i + 1}, q: a${i + 1}, r: a${i + 1}, s: a${i + 1}, t: a${i + 1}}\n`
    objects += 'export const z = a0 + ""'
    const t = performance.now()
    // what it cannot evaluate stays unresolved: on the global object, that blocks
    expect(scanSkill({ code: strings }).reasons).toContain('Hides the name of a global behind a computed key')
    expect(scanSkill({ code: objects }).trustTier).toBe('review')
    expect(performance.now() - t).toBeLessThan(1000)
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
