import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { backendApiDocument } from '../../functions/backend/app'
import { webApiDocument } from '../../functions/docs/document'
import { limits } from '../../lib/http/limits'
import { describeLimit } from '../../lib/http/rate-limit'

/**
 * Both OpenAPI documents pass the linters API users run on them: Redocly's recommended rules with no error and
 * no warning (redocly.yaml says which rules are off, and why), and Spectral with the OWASP ruleset with no
 * error (.spectral.yaml). The CLIs from node_modules, on the documents as built from the routes.
 */
const run = promisify(execFile)
const root = new URL('../../', import.meta.url).pathname
const bin = (name: string) => join(root, 'node_modules', '.bin', name)

const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const documents = { web: webApiDocument(), backend: backendApiDocument() }
const files = Object.fromEntries(
  Object.entries(documents).map(([name, doc]) => {
    const file = join(dir, `${name}.json`)
    writeFileSync(file, JSON.stringify(doc, null, 1))
    return [name, file]
  }),
)

/** stdout of a CLI that exits non-zero when it finds problems (the findings are still on stdout). */
async function stdoutOf(cmd: string, args: string[]) {
  try {
    return (await run(cmd, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 })).stdout
  } catch (e) {
    const { stdout } = e as { stdout?: string }
    if (!stdout) throw e
    return stdout
  }
}

type RedoclyProblem = { ruleId: string; severity: string; message: string; location: { pointer: string }[] }
type SpectralResult = { code: string; severity: number; message: string; path: string[] }

describe.each(Object.keys(documents))('the %s OpenAPI document', (name) => {
  it('passes `redocly lint` (recommended rules): no error, no warning', { timeout: 60_000 }, async () => {
    const out = await stdoutOf(bin('redocly'), ['lint', files[name], '--config', join(root, 'redocly.yaml'), '--format=json'])
    const { problems } = JSON.parse(out) as { problems: RedoclyProblem[] }
    expect(problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([])
  })

  it('passes Spectral with the OWASP API security ruleset: no error', { timeout: 60_000 }, async () => {
    const out = await stdoutOf(bin('spectral'), ['lint', files[name], '-r', join(root, '.spectral.yaml'), '-f', 'json', '--fail-severity=error'])
    const results = JSON.parse(out) as SpectralResult[]
    const errors = results.filter((r) => r.severity === 0)
    expect(errors.map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`)).toEqual([])
  })

  // In place of OWASP's rate-limit rules (off: they ask it of every operation): every operation that can
  // answer 429 documents Retry-After on it and the RateLimit-* headers on its 2xx answers.
  it('documents RateLimit-* on the 2xx answers and Retry-After on the 429 of every limited operation', () => {
    type Response = { headers?: Record<string, unknown> }
    const limited = Object.entries(documents[name as keyof typeof documents].paths ?? {}).flatMap(([path, ops]) =>
      Object.entries(ops as Record<string, { responses?: Record<string, Response> }>)
        .filter(([, op]) => op.responses?.[429])
        .map(([method, op]) => ({ at: `${method} ${path}`, responses: op.responses! })),
    )
    for (const { at, responses } of limited) {
      expect(Object.keys(responses[429].headers ?? {}), at).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'])
      for (const [status, res] of Object.entries(responses)) {
        if (status.startsWith('2')) expect(Object.keys(res.headers ?? {}), `${at} ${status}`).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']))
      }
    }
    if (name === 'backend') expect(limited.length).toBeGreaterThan(0)
    if (name === 'web') expect(limited.map((l) => l.at)).toContain('post /api/auth/login')
  })
})

describe('the rate limit table (lib/http/limits.ts)', () => {
  const described = Object.values(documents).flatMap((doc) =>
    Object.values(doc.paths ?? {}).flatMap((ops) =>
      Object.values(ops as Record<string, { responses?: Record<string, { description?: string }> }>).map((op) => op.responses?.[429]?.description ?? ''),
    ),
  )

  it.each(Object.entries(limits))('%s is used: an operation applies it and documents its 429', (_key, rule) => {
    const text = `over ${describeLimit(rule)}: \`${rule.message}\``.toLowerCase()
    expect(described.some((d) => d.toLowerCase().includes(text))).toBe(true)
  })

  it('every rule fits the bounds the RateLimit-* headers document (a limit up to 100 000, a window up to a day)', () => {
    for (const rule of Object.values(limits)) {
      expect(rule.limit).toBeLessThanOrEqual(100_000)
      expect(rule.windowSec).toBeLessThanOrEqual(86_400)
    }
  })
})
