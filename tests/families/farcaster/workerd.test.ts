import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleFunction } from '../../../infra/bundle'
import { HOLDER, idToken, NOBODY, type Peers, startPeers } from './support/peers'

// The Worker bundle itself against the real peers: jose (JWKS over fetch, crypto.subtle) and viem run in workerd.
let peers: Peers
let mf: Miniflare
beforeAll(async () => {
  peers = await startPeers()
  const { code } = await bundleFunction(new URL('../../../functions/farcaster/index.ts', import.meta.url).pathname)
  mf = new Miniflare({
    modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }],
    compatibilityDate: '2026-04-01',
    bindings: { APP_ORIGIN: 'http://localhost:3000', ...peers.env },
  })
})
afterAll(async () => {
  await mf?.dispose()
  await peers?.close()
})

const post = (path: string, body: unknown) =>
  mf.dispatchFetch(`http://localhost${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })

describe('farcaster in workerd (no database configured)', () => {
  it('token gating reads the chain: holder and non-holder', async () => {
    const holder = await post('/api/token-gating', { address: HOLDER })
    expect(holder.status).toBe(200)
    expect(await holder.json()).toMatchObject({ hasAccess: true, balance: '5', chainId: 8453, contractAddress: peers.token })
    const res = await mf.dispatchFetch(`http://localhost/api/token-gating?address=${NOBODY}`)
    expect(await res.json()).toMatchObject({ hasAccess: false, balance: '0' })
  })

  it('verify checks the token against the JWKS: a forged one is 401, a genuine one gets as far as the database (503)', async () => {
    const forged = await post('/api/auth/farcaster/verify', { token: await idToken(peers, 1, { aud: 'evil.example' }) })
    expect(forged.status).toBe(401)
    const genuine = await post('/api/auth/farcaster/verify', { token: await idToken(peers, 1, {}, { kid: peers.kids.eddsa }) })
    expect(await genuine.json()).toEqual({ error: 'Database not configured', code: 'NOT_CONFIGURED' })
    expect(genuine.status).toBe(503)
  })
})
