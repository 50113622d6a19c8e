import { describe, expect, it } from 'vitest'
import { pad, serializeErc6492Signature } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { useHarness } from '../../support/harness'
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
