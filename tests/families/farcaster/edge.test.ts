import { eq } from 'drizzle-orm'
import { createServer } from 'node:http'
import { generateKeyPair, SignJWT } from 'jose'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { addressProofMessage } from '../../../functions/farcaster/address-proof'
import { sha256Hex } from '../../../lib/crypto'
import { users } from '../../../schema'
import { useFixture, useHarness } from '../../support/harness'
import { closedUrl, listen } from '../../support/loopback'
import { call, DOMAIN, farcasterWith, HOLDER, idToken, NOBODY, proveAddress, SERVICE_DOMAIN, startPeers, WALLETS } from './support/peers'

/** Issue #9 finding 7: `alg` is checked before any key fetch, and the gated address must be the signer's. */
let jwksHits = 0
let countingUrl: string
let rpcDown: string
const peers = useFixture(() => startPeers())
const h = useHarness(() => ({ env: peers.env }))
// A key set that counts its fetches and answers nothing useful: a fetch would show up here (and as a 502).
const countingJwks = useFixture(() =>
  listen(
    createServer((_req, res) => {
      jwksHits++
      res.writeHead(500).end()
    }),
  ),
)
beforeAll(async () => {
  countingUrl = `${countingJwks.url}/jwks`
  rpcDown = await closedUrl()
})

const VERIFY = '/api/auth/farcaster/verify'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const now = () => Math.floor(Date.now() / 1000)
const claims = (fid: number) => ({ iss: peers.issuerUrl, aud: DOMAIN, sub: String(fid), iat: now(), exp: now() + 3600 })
const userOf = async (fid: number) => (await h.db.select().from(users).where(eq(users.email, `${fid}@farcaster.${SERVICE_DOMAIN}`)))[0]
const INVALID_TOKEN = { error: 'Invalid Farcaster token', code: 'INVALID_TOKEN' }
const UNPROVEN = { error: 'Address ownership not proven', code: 'ADDRESS_NOT_PROVEN' }

describe('farcaster verify: the algorithm is checked before the issuer is asked for keys', () => {
  const unsigned: Array<[string, () => Promise<string>]> = [
    ['alg: none', async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims(8001))}.`],
    ['alg: None', async () => `${b64({ alg: 'None' })}.${b64(claims(8001))}.`],
    ['HS256', () => new SignJWT(claims(8001)).setProtectedHeader({ alg: 'HS256', kid: peers.kids.rs256 }).sign(new TextEncoder().encode('k'.repeat(32)))],
    ['an unknown alg', async () => `${b64({ alg: 'XS512', kid: peers.kids.rs256 })}.${b64(claims(8001))}.c2ln`],
    ['no alg', async () => `${b64({ typ: 'JWT' })}.${b64(claims(8001))}.c2ln`],
    ['a header that is not JSON', async () => `${Buffer.from('{alg').toString('base64url')}.${b64(claims(8001))}.c2ln`],
  ]
  for (const [label, make] of unsigned) {
    it(`${label} → 401 INVALID_TOKEN with the issuer unreachable, and its key set never fetched`, async () => {
      const before = jwksHits
      for (const url of [countingUrl, `${rpcDown}/jwks`]) {
        const res = await call(farcasterWith(h, { FARCASTER_JWKS_URL: url }), 'POST', VERIFY, { token: await make() })
        expect(res.status).toBe(401)
        expect(await res.json()).toEqual(INVALID_TOKEN)
      }
      expect(jwksHits).toBe(before)
      expect(await userOf(8001)).toBeUndefined()
    })
  }

  it('an allowed alg with the issuer unreachable is still the issuer\'s 503 (the check is only about alg)', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const { privateKey } = await generateKeyPair('ES256')
    const token = await new SignJWT(claims(8002)).setProtectedHeader({ alg: 'ES256', kid: 'k' }).sign(privateKey)
    const res = await call(farcasterWith(h, { FARCASTER_JWKS_URL: countingUrl }), 'POST', VERIFY, { token })
    expect(res.status).toBe(503)
    expect(jwksHits).toBeGreaterThan(0)
    spy.mockRestore()
  })
})

describe('farcaster verify: token gating checks only an address the signer proved to hold', () => {
  const verify = (body: unknown, app = h.web) => call(app, 'POST', VERIFY, body)

  it('the proof message names the domain, the checksummed address, the FID and the token\'s SHA-256', async () => {
    const msg = await addressProofMessage(h.services.config, { address: HOLDER.toLowerCase(), fid: 42, token: 'tok' })
    expect(msg).toBe(
      `${DOMAIN} asks you to prove that you hold this address for Farcaster sign-in.\n\n` +
        `Address: ${HOLDER}\nFID: 42\nToken: ${await sha256Hex('tok')}`,
    )
  })

  it('a holder\'s address without a signature → 403 ADDRESS_NOT_PROVEN; no balance read, no user, no cookie', async () => {
    // The RPC is down: had the balance been read first, this would be a 502.
    const res = await verify({ token: await idToken(peers, 8101), address: HOLDER }, farcasterWith(h, { BASE_RPC_URL: rpcDown }))
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual(UNPROVEN)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect(await userOf(8101)).toBeUndefined()
  })

  it('a signature by another wallet (the caller\'s own) does not prove a holder\'s address', async () => {
    const token = await idToken(peers, 8102)
    const message = await addressProofMessage(h.services.config, { address: HOLDER, fid: 8102, token })
    const addressSignature = await WALLETS.nobody.signMessage({ message })
    const res = await verify({ token, address: HOLDER, addressSignature })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual(UNPROVEN)
    expect(await userOf(8102)).toBeUndefined()
  })

  it('a holder\'s genuine proof cannot be replayed with another token, another FID or another address', async () => {
    const holderToken = await idToken(peers, 8103)
    const proof = await proveAddress(h.services.config, HOLDER, 8103, holderToken)
    expect((await verify({ token: holderToken, address: HOLDER, addressSignature: proof })).status).toBe(200)
    // The attacker signs in as themselves and presents the holder's captured proof.
    for (const body of [
      { token: await idToken(peers, 8104), address: HOLDER, addressSignature: proof },
      { token: await idToken(peers, 8103, { iat: now() - 5 }), address: HOLDER, addressSignature: proof }, // same fid, new token
      { token: holderToken, address: NOBODY, addressSignature: proof },
    ]) {
      const res = await verify(body)
      expect(res.status).toBe(403)
      expect(await res.json()).toEqual(UNPROVEN)
    }
    expect(await userOf(8104)).toBeUndefined()
  })

  it('a malformed addressSignature → 400 VALIDATION', async () => {
    for (const addressSignature of ['nope', '0x1234', `0x${'z'.repeat(130)}`, 12]) {
      const res = await verify({ token: await idToken(peers, 8105), address: HOLDER, addressSignature })
      expect(res.status).toBe(400)
      expect((await res.json()).code).toBe('VALIDATION')
    }
  })

  it('a signature that needs the chain (not the address\'s EOA signature) with the RPC down → 503 Chain unavailable', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const token = await idToken(peers, 8106)
    const addressSignature = await WALLETS.nobody.signMessage({ message: await addressProofMessage(h.services.config, { address: HOLDER, fid: 8106, token }) })
    const res = await verify({ token, address: HOLDER, addressSignature }, farcasterWith(h, { BASE_RPC_URL: rpcDown }))
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ error: 'Chain unavailable', code: 'CHAIN_UNAVAILABLE' })
    spy.mockRestore()
  })

  it('without a gate the address (and any signature) is ignored, as before', async () => {
    const res = await verify({ token: await idToken(peers, 8107), address: HOLDER }, farcasterWith(h, { TOKEN_GATE_CONTRACT: undefined }))
    expect(res.status).toBe(200)
    expect((await res.json()).tokenGate).toBeUndefined()
  })

  it('the OpenAPI document describes addressSignature and ADDRESS_NOT_PROVEN', async () => {
    const doc = await (await h.web.request('/api/openapi.json')).json()
    const op = doc.paths[VERIFY].post
    expect(op.description).toContain('ADDRESS_NOT_PROVEN')
    const schema = JSON.stringify(doc.components.schemas.FarcasterVerifyRequest)
    expect(schema).toContain('addressSignature')
  })
})
