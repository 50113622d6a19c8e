import { describe, expect, it } from 'vitest'
import { pad, serializeErc6492Signature } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { anvilAvailable, startAnvil } from '../../support/anvil'
import { startFaultProxy } from '../../support/fault-proxy'
import { useFixture, useHarness } from '../../support/harness'
import { closedUrl } from '../../support/loopback'
import { expectRefused, getNonce, postWalletAuth, signInBase, signInTempo, siweMessage } from './flow'

// Base's RPC is down: nothing listens at its URL.
const h = useHarness(async () => ({ env: { BASE_RPC_URL: await closedUrl() } }))

const wallet = privateKeyToAccount(generatePrivateKey())

describe('Base RPC unreachable', () => {
  it('EOA sign-in on Base does not need the chain (recovered offline)', async () => {
    expect((await signInBase(h, wallet)).res.status).toBe(200)
  })

  it('Tempo sign-in does not need it either', async () => {
    expect((await signInTempo(h, wallet)).res.status).toBe(200)
  })

  it('a smart-wallet signature answers 503 CHAIN_UNAVAILABLE, not 401 or 500', async () => {
    const account = privateKeyToAccount(generatePrivateKey()).address // stands in for a counterfactual account
    const message = siweMessage(account, await getNonce(h))
    const signature = serializeErc6492Signature({ address: account, data: pad('0x01'), signature: await wallet.signMessage({ message }) })
    const body = await expectRefused(await postWalletAuth(h, { address: account, message, signature }), 503, 'CHAIN_UNAVAILABLE')
    expect(body).toEqual({ error: 'Signature verification unavailable', code: 'CHAIN_UNAVAILABLE' })
  })

  it('so does an EOA signature that does not recover to the address (it could be a contract wallet)', async () => {
    const message = siweMessage(wallet.address, await getNonce(h))
    const signature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message })
    await expectRefused(await postWalletAuth(h, { address: wallet.address, message, signature }), 503, 'CHAIN_UNAVAILABLE')
  })
})

describe.runIf(anvilAvailable)('Base RPC never answering (anvil behind the fault proxy)', () => {
  /** Each RPC attempt gives up after this long (`BASE_RPC_TIMEOUT_MS`); the transport retries once. */
  const TIMEOUT_MS = 300
  /** The bound on an answer: two attempts, the transport's pause between them, and room for a loaded machine. */
  const WITHIN_MS = 2 * TIMEOUT_MS + 2500
  const anvil = useFixture(() => startAnvil())
  const proxy = useFixture(() => startFaultProxy({ target: anvil.url, mode: 'http' }))
  const slow = useHarness(() => ({ env: { BASE_RPC_URL: proxy.url, BASE_RPC_TIMEOUT_MS: String(TIMEOUT_MS) } }))

  /** An EOA signature that does not recover to the address: only the chain can say it is no contract wallet's. */
  async function foreignSignature() {
    const message = siweMessage(wallet.address, await getNonce(slow))
    return postWalletAuth(slow, { address: wallet.address, message, signature: await privateKeyToAccount(generatePrivateKey()).signMessage({ message }) })
  }

  it('blackholed → 503 CHAIN_UNAVAILABLE in time; once back, the chain is asked and the signature refused (401)', async () => {
    await proxy.set('blackhole')
    const started = performance.now()
    const res = await foreignSignature().finally(() => proxy.set('pass'))
    const ms = performance.now() - started
    expect(await expectRefused(res, 503, 'CHAIN_UNAVAILABLE')).toEqual({ error: 'Signature verification unavailable', code: 'CHAIN_UNAVAILABLE' })
    expect(ms).toBeLessThan(WITHIN_MS)

    const seen = proxy.seen
    await expectRefused(await foreignSignature(), 401, 'SIGNATURE_INVALID')
    expect(proxy.seen).toBeGreaterThan(seen)
  })
})
