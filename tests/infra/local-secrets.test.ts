import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { describeLocalSecrets, loadLocalSecrets, secretsDir } from '../../infra/local-secrets'

let dataDir = ''
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'local-secrets-'))
})
afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

const file = (name: string) => join(secretsDir(dataDir), name)
const mode = (path: string) => statSync(path).mode & 0o777

describe('local secrets (infra/local-secrets.ts)', () => {
  it('generates each missing secret once, owner-only, and reads the same values back on the next start', () => {
    const first: Record<string, string | undefined> = {}
    const report = loadLocalSecrets(first, dataDir)
    expect(report.sources).toEqual({ SESSION_SECRET: 'generated', FARCASTER_SESSION_SECRET: 'generated', QSTASH_CURRENT_SIGNING_KEY: 'generated' })
    expect(mode(secretsDir(dataDir))).toBe(0o700)
    for (const name of Object.keys(report.sources)) {
      expect(mode(file(name))).toBe(0o600)
      expect(first[name]).toMatch(/^[A-Za-z0-9_-]{43}$/) // 32 random bytes
      expect(readFileSync(file(name), 'utf8')).toBe(first[name])
    }
    expect(new Set([first.SESSION_SECRET, first.FARCASTER_SESSION_SECRET, first.QSTASH_CURRENT_SIGNING_KEY]).size).toBe(3)
    expect(readdirSync(secretsDir(dataDir))).toHaveLength(3) // no temporary file left behind

    const second: Record<string, string | undefined> = {}
    expect(loadLocalSecrets(second, dataDir).sources).toEqual({ SESSION_SECRET: 'loaded', FARCASTER_SESSION_SECRET: 'loaded', QSTASH_CURRENT_SIGNING_KEY: 'loaded' })
    expect(second).toEqual(first)
  })

  it('what the environment sets wins and is never written; fallbacks count as set; QStash keys only without QStash', () => {
    const env: Record<string, string | undefined> = { SESSION_SECRET: 'from-env', NEXTAUTH_SECRET: 'next', QSTASH_TOKEN: 'q' }
    const report = loadLocalSecrets(env, dataDir)
    // NEXTAUTH_SECRET is the Farcaster secret's fallback; with QStash configured its own keys verify deliveries.
    expect(report.sources).toEqual({ SESSION_SECRET: 'environment', FARCASTER_SESSION_SECRET: 'environment' })
    expect(env).toEqual({ SESSION_SECRET: 'from-env', NEXTAUTH_SECRET: 'next', QSTASH_TOKEN: 'q' })
    expect(() => statSync(secretsDir(dataDir))).toThrow() // nothing written at all

    // A stored secret is not used while the environment sets it, and stays as it is.
    const stored = loadLocalSecrets({}, dataDir)
    expect(stored.sources.SESSION_SECRET).toBe('generated')
    const kept = readFileSync(file('SESSION_SECRET'), 'utf8')
    const env2: Record<string, string | undefined> = { SESSION_SECRET: 'from-env' }
    expect(loadLocalSecrets(env2, dataDir).sources.SESSION_SECRET).toBe('environment')
    expect(env2.SESSION_SECRET).toBe('from-env')
    expect(readFileSync(file('SESSION_SECRET'), 'utf8')).toBe(kept)
  })

  it('an existing file is never replaced: its value is used (trimmed); an empty one stops the start, saying what to do', () => {
    mkdirSync(secretsDir(dataDir), { recursive: true, mode: 0o700 })
    writeFileSync(file('SESSION_SECRET'), 'hand-made-secret\n', { mode: 0o600 })
    const env: Record<string, string | undefined> = {}
    expect(loadLocalSecrets(env, dataDir).sources).toMatchObject({ SESSION_SECRET: 'loaded', FARCASTER_SESSION_SECRET: 'generated' })
    expect(env.SESSION_SECRET).toBe('hand-made-secret')
    expect(readFileSync(file('SESSION_SECRET'), 'utf8')).toBe('hand-made-secret\n')

    writeFileSync(file('FARCASTER_SESSION_SECRET'), '')
    expect(() => loadLocalSecrets({}, dataDir)).toThrow(/FARCASTER_SESSION_SECRET is empty\. Put the secret back, or delete the file/)
    expect(readFileSync(file('FARCASTER_SESSION_SECRET'), 'utf8')).toBe('')
  })

  it('a secret file or directory readable by others is made owner-only, and said', () => {
    loadLocalSecrets({}, dataDir)
    chmodSync(secretsDir(dataDir), 0o755)
    chmodSync(file('SESSION_SECRET'), 0o644)
    const report = loadLocalSecrets({}, dataDir)
    expect(report.tightened).toEqual([secretsDir(dataDir), file('SESSION_SECRET')])
    expect(mode(secretsDir(dataDir))).toBe(0o700)
    expect(mode(file('SESSION_SECRET'))).toBe(0o600)
  })

  it('the start-up line names sources and where they are kept, never a value', () => {
    const env: Record<string, string | undefined> = { FARCASTER_SESSION_SECRET: 'configured' }
    const line = describeLocalSecrets(loadLocalSecrets(env, dataDir))
    expect(line).toBe(
      `generated SESSION_SECRET, QSTASH_CURRENT_SIGNING_KEY; from the environment FARCASTER_SESSION_SECRET (kept in ${secretsDir(dataDir)}, 0600; production must configure them)`,
    )
    expect(line).not.toContain(env.SESSION_SECRET!)
    expect(describeLocalSecrets(loadLocalSecrets({ SESSION_SECRET: 'a', FARCASTER_SESSION_SECRET: 'b', QSTASH_TOKEN: 'q' }, dataDir))).toBe(
      'from the environment SESSION_SECRET, FARCASTER_SESSION_SECRET',
    )
  })
})
