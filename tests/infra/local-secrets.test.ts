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
    const names = ['SESSION_SECRET', 'FARCASTER_SESSION_SECRET', 'QSTASH_CURRENT_SIGNING_KEY', 'ENCRYPTION_KEYS', 'INTERNAL_API_KEY', 'HMAC_SECRET']
    expect(report.sources).toEqual(Object.fromEntries(names.map((n) => [n, 'generated'])))
    expect(mode(secretsDir(dataDir))).toBe(0o700)
    // 32 random bytes each: base64url, the sealing key as `id:base64` (lib/secret-box.ts), the internal key prefixed.
    const shapes: Record<string, RegExp> = { ENCRYPTION_KEYS: /^local:[A-Za-z0-9+/]{43}=$/, INTERNAL_API_KEY: /^ik_[A-Za-z0-9_-]{43}$/ }
    for (const name of names) {
      expect(mode(file(name))).toBe(0o600)
      expect(first[name]).toMatch(shapes[name] ?? /^[A-Za-z0-9_-]{43}$/)
      expect(readFileSync(file(name), 'utf8')).toBe(first[name])
    }
    expect(new Set(names.map((n) => first[n])).size).toBe(names.length)
    expect(readdirSync(secretsDir(dataDir))).toHaveLength(names.length) // no temporary file left behind

    const second: Record<string, string | undefined> = {}
    expect(loadLocalSecrets(second, dataDir).sources).toEqual(Object.fromEntries(names.map((n) => [n, 'loaded'])))
    expect(second).toEqual(first)
  })

  it('what the environment sets wins and is never written; fallbacks count as set; QStash keys only without QStash', () => {
    const configured = { ENCRYPTION_KEYS: 'k:x', INTERNAL_API_KEY: 'i', HMAC_SECRET: 'h' }
    const env: Record<string, string | undefined> = { SESSION_SECRET: 'from-env', NEXTAUTH_SECRET: 'next', QSTASH_TOKEN: 'q', ...configured }
    const report = loadLocalSecrets(env, dataDir)
    // NEXTAUTH_SECRET is the Farcaster secret's fallback; with QStash configured its own keys verify deliveries.
    expect(report.sources).toEqual({ SESSION_SECRET: 'environment', FARCASTER_SESSION_SECRET: 'environment', ENCRYPTION_KEYS: 'environment', INTERNAL_API_KEY: 'environment', HMAC_SECRET: 'environment' })
    expect(env).toEqual({ SESSION_SECRET: 'from-env', NEXTAUTH_SECRET: 'next', QSTASH_TOKEN: 'q', ...configured })
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
    const env: Record<string, string | undefined> = { FARCASTER_SESSION_SECRET: 'configured', ENCRYPTION_KEYS: 'k:x', INTERNAL_API_KEY: 'i', HMAC_SECRET: 'h' }
    const line = describeLocalSecrets(loadLocalSecrets(env, dataDir))
    expect(line).toBe(
      `generated SESSION_SECRET, QSTASH_CURRENT_SIGNING_KEY; from the environment FARCASTER_SESSION_SECRET, ENCRYPTION_KEYS, INTERNAL_API_KEY, HMAC_SECRET (kept in ${secretsDir(dataDir)}, 0600; production must configure them)`,
    )
    expect(line).not.toContain(env.SESSION_SECRET!)
    expect(describeLocalSecrets(loadLocalSecrets({ SESSION_SECRET: 'a', FARCASTER_SESSION_SECRET: 'b', QSTASH_TOKEN: 'q', ALLOW_UNSIGNED_IDENTITY: '1', ENCRYPTION_KEYS: 'k:x' }, dataDir))).toBe(
      'from the environment SESSION_SECRET, FARCASTER_SESSION_SECRET, ENCRYPTION_KEYS',
    )
  })

  it('unsigned identity headers (ALLOW_UNSIGNED_IDENTITY) get neither identity secret: either would switch that mode off', () => {
    const env: Record<string, string | undefined> = { ALLOW_UNSIGNED_IDENTITY: 'true' }
    const report = loadLocalSecrets(env, dataDir)
    expect(report.sources).not.toHaveProperty('INTERNAL_API_KEY')
    expect(report.sources).not.toHaveProperty('HMAC_SECRET')
    expect(env.INTERNAL_API_KEY).toBeUndefined()
    expect(env.HMAC_SECRET).toBeUndefined()
  })

  it('a value sealed under the key derived from SESSION_SECRET still opens once ENCRYPTION_KEYS is generated', async () => {
    const { seal, open } = await import('../../lib/secret-box')
    const { parseConfig } = await import('../../lib/config')
    const before = parseConfig({ SESSION_SECRET: 'kept-secret' })
    const sealed = await seal(before, 'sk-provider-key', 'u1', 'byok')
    const env: Record<string, string | undefined> = { SESSION_SECRET: 'kept-secret' }
    loadLocalSecrets(env, dataDir)
    const after = parseConfig(env)
    expect(await open(after, sealed, 'u1', 'byok')).toBe('sk-provider-key')
    expect((await seal(after, 'new', 'u1', 'byok')).keyId).toBe('local') // new values under the generated key
  })
})
