import { randomBytes, randomUUID } from 'node:crypto'
import { chmodSync, closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The secrets the local server (`npm start`) needs and would otherwise invent per process, which a restart would
 * then lose: every CSRF token and OAuth state, every Farcaster session, and, worst, every value sealed at rest
 * (agents' gateway tokens, BYOK keys, calendar tokens: lib/secret-box.ts derives its key from SESSION_SECRET).
 *
 * Each one unset in the environment is generated once (32 random bytes, base64url) and kept in
 * `<DATA_DIR>/secrets/<NAME>`: the directory 0700, the file 0600, written to a temporary file and then linked
 * into place, so it appears whole or not at all and an existing one is never replaced (two servers starting at
 * once both end up with the one that was linked first). Later starts read it back. A variable set in the
 * environment always wins and is never written. Workers never come here: they have no DATA_DIR and their secrets
 * are configured (README "Local secrets").
 */
export interface LocalSecret {
  name: string
  /** Set in the environment under any of these names, the secret is configured (the app falls back among them). */
  configuredBy: readonly string[]
  /** Whether this configuration needs it at all. */
  needed(env: Record<string, string | undefined>): boolean
  /** A new value; by default 32 random bytes in base64url. */
  generate?: () => string
}

const randomSecret = () => randomBytes(32).toString('base64url')

export const LOCAL_SECRETS: readonly LocalSecret[] = [
  // CSRF tokens, OAuth state, DJ access tokens, and the key that seals secrets at rest (unless ENCRYPTION_KEYS).
  { name: 'SESSION_SECRET', configuredBy: ['SESSION_SECRET', 'NEXTAUTH_SECRET'], needed: () => true },
  // Farcaster session tokens (functions/farcaster/session-token.ts falls back to NEXTAUTH_SECRET).
  { name: 'FARCASTER_SESSION_SECRET', configuredBy: ['FARCASTER_SESSION_SECRET', 'NEXTAUTH_SECRET'], needed: () => true },
  // The in-process queue signs its deliveries as QStash does; with QStash configured its own keys are used.
  { name: 'QSTASH_CURRENT_SIGNING_KEY', configuredBy: ['QSTASH_CURRENT_SIGNING_KEY'], needed: (env) => !env.QSTASH_TOKEN },
  // The key that seals secrets at rest (lib/secret-box.ts: `id:base64` of 32 bytes, the first seals). Values sealed
  // before it existed, under the key derived from SESSION_SECRET (id `session`), still open: that key stays in the ring.
  { name: 'ENCRYPTION_KEYS', configuredBy: ['ENCRYPTION_KEYS'], needed: () => true, generate: () => `local:${randomBytes(32).toString('base64')}` },
  // The shared key of internal callers (the agents' tool-call hook, /api/hooks/*, 503 without it; the backend's
  // internal routes) and, with HMAC_SECRET, what signs identity headers. Neither is generated when the developer chose
  // unsigned identity headers (ALLOW_UNSIGNED_IDENTITY), which either secret would switch off.
  { name: 'INTERNAL_API_KEY', configuredBy: ['INTERNAL_API_KEY'], needed: (env) => !unsignedIdentity(env), generate: () => `ik_${randomSecret()}` },
  { name: 'HMAC_SECRET', configuredBy: ['HMAC_SECRET'], needed: (env) => !unsignedIdentity(env) },
]

/** As lib/config.ts reads the flag. */
function unsignedIdentity(env: Record<string, string | undefined>) {
  const v = env.ALLOW_UNSIGNED_IDENTITY?.toLowerCase()
  return v === '1' || v === 'true' || v === 'yes'
}

export type SecretSource = 'environment' | 'loaded' | 'generated'

export interface LocalSecretsReport {
  dir: string
  sources: Record<string, SecretSource>
  /** Files or the directory found readable by others, tightened to 0600/0700. */
  tightened: string[]
}

/** The directory under DATA_DIR where generated secrets live. */
export const secretsDir = (dataDir: string) => join(dataDir, 'secrets')

const isSet = (env: Record<string, string | undefined>, name: string) => typeof env[name] === 'string' && env[name] !== ''

/**
 * Fills `env` with every needed secret it lacks, from `<dataDir>/secrets` or newly generated there; answers where
 * each came from (never a value). Throws, stopping the start, on a secret file it cannot use (empty, unreadable):
 * it is never overwritten, since values sealed under it would be lost.
 */
export function loadLocalSecrets(env: Record<string, string | undefined>, dataDir: string): LocalSecretsReport {
  const dir = secretsDir(dataDir)
  const report: LocalSecretsReport = { dir, sources: {}, tightened: [] }
  for (const secret of LOCAL_SECRETS) {
    if (!secret.needed(env)) continue
    if (secret.configuredBy.some((n) => isSet(env, n))) {
      report.sources[secret.name] = 'environment'
      continue
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    if (tighten(dir, 0o700)) report.tightened.push(dir)
    const path = join(dir, secret.name)
    let source: SecretSource = 'loaded'
    if (!exists(path)) source = createExclusive(path, (secret.generate ?? randomSecret)()) ? 'generated' : 'loaded'
    if (tighten(path, 0o600)) report.tightened.push(path)
    const value = readFileSync(path, 'utf8').trim()
    if (!value) {
      throw new Error(
        `${path} is empty. Put the secret back, or delete the file to have a new one generated (anything sealed under the old one is then lost).`,
      )
    }
    env[secret.name] = value
    report.sources[secret.name] = source
  }
  return report
}

/** One line for the start-up output: which secret came from where, never a value. */
export function describeLocalSecrets(report: LocalSecretsReport): string {
  const by = (s: SecretSource) => Object.entries(report.sources).filter(([, v]) => v === s).map(([k]) => k)
  const parts = [
    ...(by('generated').length ? [`generated ${by('generated').join(', ')}`] : []),
    ...(by('loaded').length ? [`loaded ${by('loaded').join(', ')}`] : []),
    ...(by('environment').length ? [`from the environment ${by('environment').join(', ')}`] : []),
  ]
  const kept = by('generated').length + by('loaded').length ? ` (kept in ${report.dir}, 0600; production must configure them)` : ''
  return `${parts.join('; ')}${kept}`
}

function exists(path: string) {
  try {
    statSync(path)
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw e
  }
}

/** Creates `path` holding `value` (0600) unless it exists: whole or not at all. False when another start won. */
function createExclusive(path: string, value: string): boolean {
  const tmp = `${path}.${process.pid}.${randomUUID()}.tmp`
  const fd = openSync(tmp, 'wx', 0o600)
  try {
    writeSync(fd, value)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    chmodSync(tmp, 0o600)
    linkSync(tmp, path) // fails with EEXIST rather than replace
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw e
  } finally {
    unlinkSync(tmp)
  }
}

/** Takes group and other permissions off `path`; true when it had any. */
function tighten(path: string, mode: number): boolean {
  if (process.platform === 'win32') return false
  if ((statSync(path).mode & 0o077) === 0) return false
  chmodSync(path, mode)
  return true
}
