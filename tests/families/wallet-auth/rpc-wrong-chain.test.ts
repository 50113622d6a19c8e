import { expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startAnvil } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import { expectRefused, getNonce, postWalletAuth, signInBase, siweMessage } from './flow'

// BASE_RPC_URL misconfigured to another chain (a Tempo-like 4217 node): contract checks there mean nothing.
const anvil = useFixture(() => startAnvil({ chainId: 4217 }))
const h = useHarness(() => ({ env: { BASE_RPC_URL: anvil.url } }))

const wallet = privateKeyToAccount(generatePrivateKey())

it('EOA sign-in is unaffected (no RPC call)', async () => {
  expect((await signInBase(h, wallet)).res.status).toBe(200)
})

it('a signature that needs the chain answers 503 CHAIN_UNAVAILABLE rather than trusting a foreign chain', async () => {
  const message = siweMessage(wallet.address, await getNonce(h))
  const signature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message })
  await expectRefused(await postWalletAuth(h, { address: wallet.address, message, signature }), 503, 'CHAIN_UNAVAILABLE')
})
