import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers'
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'

/**
 * A software authenticator (ES256, or Ed25519 for keys taken from Chromium; attestation `none`) for tests without a browser, and for crafting what a
 * browser would refuse to send: a credential whose private key is known, re-registered over a fresh
 * challenge, or an assertion with a chosen counter, flags or origin.
 */
export interface Ceremony {
  /** base64url challenge as it appears in the options (`options.challenge`). */
  challenge: string
  origin?: string
  rpId?: string
  userVerified?: boolean
  counter?: number
}

const sha256 = (data: Uint8Array | string) => new Uint8Array(createHash('sha256').update(data).digest())
const u32 = (n: number) => new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255])
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts))
const UP = 0x01
const UV = 0x04
const AT = 0x40

export class SoftAuthenticator {
  counter: number
  readonly id: string

  constructor(
    readonly defaults: { origin: string; rpId: string },
    private readonly key: KeyObject = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    id: Uint8Array = new Uint8Array(randomBytes(32)),
    counter = 0,
  ) {
    this.id = Buffer.from(id).toString('base64url')
    this.counter = counter
  }

  /** The same key a browser's virtual authenticator holds (CDP `WebAuthn.getCredentials`: base64 PKCS#8 and id). */
  static fromCdp(defaults: { origin: string; rpId: string }, cred: { credentialId: string; privateKey: string; signCount: number }) {
    const key = createPrivateKey({ key: Buffer.from(cred.privateKey, 'base64'), format: 'der', type: 'pkcs8' })
    return new SoftAuthenticator(defaults, key, new Uint8Array(Buffer.from(cred.credentialId, 'base64')), cred.signCount)
  }

  // Chromium's virtual authenticator picks EdDSA (first in the default algorithms); ours make ES256.
  private get eddsa() {
    return this.key.asymmetricKeyType === 'ed25519'
  }

  private cosePublicKey() {
    const jwk = this.key.export({ format: 'jwk' })
    const coord = (v?: string) => new Uint8Array(Buffer.from(v ?? '', 'base64url'))
    const entries: Array<[number, number | Uint8Array]> = this.eddsa
      ? [[1, 1], [3, -8], [-1, 6], [-2, coord(jwk.x)]] // kty OKP, alg EdDSA, crv Ed25519, x
      : [[1, 2], [3, -7], [-1, 1], [-2, coord(jwk.x)], [-3, coord(jwk.y)]] // kty EC2, alg ES256, crv P-256, x, y
    return isoCBOR.encode(new Map(entries))
  }

  private clientData(type: string, c: Ceremony) {
    const json = JSON.stringify({ type, challenge: c.challenge, origin: c.origin ?? this.defaults.origin, crossOrigin: false })
    return new TextEncoder().encode(json)
  }

  private flags(c: Ceremony, extra = 0) {
    return new Uint8Array([UP | (c.userVerified === false ? 0 : UV) | extra])
  }

  register(c: Ceremony): RegistrationResponseJSON {
    const rawId = isoBase64URL.toBuffer(this.id)
    const authData = concat(
      sha256(c.rpId ?? this.defaults.rpId),
      this.flags(c, AT),
      u32(c.counter ?? this.counter),
      new Uint8Array(16), // aaguid
      new Uint8Array([rawId.length >> 8, rawId.length & 255]),
      rawId,
      this.cosePublicKey(),
    )
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never)
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: isoBase64URL.fromBuffer(this.clientData('webauthn.create', c)),
        attestationObject: isoBase64URL.fromBuffer(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }

  /** An assertion; without an explicit `counter` the authenticator counts up first, as real ones do. */
  assert(c: Ceremony): AuthenticationResponseJSON {
    const counter = c.counter ?? ++this.counter
    const authData = concat(sha256(c.rpId ?? this.defaults.rpId), this.flags(c), u32(counter))
    const clientData = this.clientData('webauthn.get', c)
    // ES256 signatures are DER (Node's default), as WebAuthn wants; Ed25519 takes no digest.
    const signature = sign(this.eddsa ? null : 'sha256', concat(authData, sha256(clientData)), this.key)
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: isoBase64URL.fromBuffer(clientData),
        authenticatorData: isoBase64URL.fromBuffer(authData),
        signature: isoBase64URL.fromBuffer(new Uint8Array(signature)),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }
}
