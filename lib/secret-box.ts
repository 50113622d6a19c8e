import type { Config } from './config'
import { ApiError } from './http/errors'

/**
 * Secrets stored at rest (BYOK provider keys, calendar OAuth tokens): AES-256-GCM through Web Crypto, a fresh
 * 96-bit IV per seal, and the row's owner and purpose as additional data, so a sealed value copied onto another
 * user's row (or into another column) fails to open. Keys come from `ENCRYPTION_KEYS` (`id:base64,id2:base64`, the
 * first seals, all open: rotate by putting a new key first); without it, one key derived from SESSION_SECRET by
 * HKDF under id `session`. The key id is stored beside the ciphertext.
 */
export interface Sealed {
  keyId: string
  /** base64 of IV (12 bytes) then ciphertext and tag. */
  sealed: string
}

const enc = new TextEncoder()
const SESSION_KEY_ID = 'session'

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes))
const unb64 = (text: string) => Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0))

/** The configured keys, current first; parsed from config once per config object. */
const keyrings = new WeakMap<Config, Promise<Map<string, CryptoKey>>>()

async function loadKeys(config: Config): Promise<Map<string, CryptoKey>> {
  const keys = new Map<string, CryptoKey>()
  for (const entry of (config.ENCRYPTION_KEYS ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const at = entry.indexOf(':')
    const raw = at > 0 ? unb64(entry.slice(at + 1)) : new Uint8Array()
    if (raw.length !== 32) throw new ApiError('MISCONFIGURED')
    keys.set(entry.slice(0, at), await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']))
  }
  if (config.sessionSecret) {
    const base = await crypto.subtle.importKey('raw', enc.encode(config.sessionSecret), 'HKDF', false, ['deriveKey'])
    const derived = await crypto.subtle.deriveKey(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(32), info: enc.encode('platform secret-box v1') },
      base,
      { name: 'AES-GCM', length: 256 },
      false,
      ['encrypt', 'decrypt'],
    )
    keys.set(SESSION_KEY_ID, derived)
  }
  return keys
}

function keyring(config: Config) {
  let ring = keyrings.get(config)
  if (!ring) {
    ring = loadKeys(config)
    ring.catch(() => keyrings.delete(config))
    keyrings.set(config, ring)
  }
  return ring
}

const notConfigured = () => new ApiError('NOT_CONFIGURED', 'Encryption not configured')

/** Seals `plaintext` for `owner` and `purpose` (e.g. `byok`, `calendar:refresh`) under the current key. */
export async function seal(config: Config, plaintext: string, owner: string, purpose: string): Promise<Sealed> {
  const keys = await keyring(config)
  const [keyId, key] = keys.entries().next().value ?? []
  if (!keyId || !key) throw notConfigured()
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const data = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: enc.encode(`${purpose}:${owner}`) }, key, enc.encode(plaintext)),
  )
  const out = new Uint8Array(iv.length + data.length)
  out.set(iv)
  out.set(data, iv.length)
  return { keyId, sealed: b64(out) }
}

/**
 * A sealed value this server cannot open: its key id is not among the configured keys (they changed, or a local
 * server's generated secret was lost), or it does not decrypt (another key under the same id, moved to another
 * owner or purpose, corrupted). Callers answer it as "not set": the value is re-made (re-key, reconnect), never a 500.
 */
export class SealedValueUnreadable extends Error {
  constructor(
    readonly keyId: string,
    readonly why: 'unknown-key' | 'does-not-open',
  ) {
    super(why === 'unknown-key' ? `No configured key has id ${JSON.stringify(keyId)}` : 'The sealed value does not open with its key')
    this.name = 'SealedValueUnreadable'
  }
}

/**
 * Opens what `seal` made for the same owner and purpose. No key configured at all is 503 `NOT_CONFIGURED` (the
 * deployment's fault); a value that cannot be opened with the configured keys is `SealedValueUnreadable`.
 */
export async function open(config: Config, value: Sealed, owner: string, purpose: string): Promise<string> {
  const keys = await keyring(config)
  if (!keys.size) throw notConfigured()
  const key = keys.get(value.keyId)
  if (!key) throw new SealedValueUnreadable(value.keyId, 'unknown-key')
  try {
    const bytes = unb64(value.sealed)
    if (bytes.length < 12 + 16) throw new Error('too short')
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: bytes.subarray(0, 12), additionalData: enc.encode(`${purpose}:${owner}`) },
      key,
      bytes.subarray(12),
    )
    return new TextDecoder('utf-8', { fatal: true }).decode(plain)
  } catch {
    throw new SealedValueUnreadable(value.keyId, 'does-not-open')
  }
}
