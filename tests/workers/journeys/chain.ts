import { parseUnits } from 'viem'
import { startPeers } from '../../families/farcaster/support/peers'
import { anvilClients, deployContract } from '../../support/anvil'
import { compileContracts } from '../../support/contracts/compile'

/**
 * One local chain 8453 for the chain-reading families (wallet-auth, farcaster, radio, wallet): the Farcaster peers
 * (an ID-token issuer, anvil with the gate token held by fixed wallets), plus a 6-decimal USDC-like token with a
 * funded holder for balances.
 */
export async function startChain() {
  const peers = await startPeers()
  try {
    const usdcArtifact = compileContracts().TestUsdc
    const usdc = await deployContract(peers.anvil, usdcArtifact)
    const holder = peers.anvil.accounts[1]
    const { client, wallet } = anvilClients(peers.anvil)
    await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: usdc, abi: usdcArtifact.abi, functionName: 'mint', args: [holder.address, parseUnits('1000', 6)] }) })
    const recipient = peers.anvil.accounts[9].address
    return {
      peers,
      usdc,
      holder,
      recipient,
      env: {
        ...peers.env,
        PAYMENT_RECIPIENT: recipient,
        PAYMENT_TOKEN_ADDRESS: usdc,
        PAYMENT_TOKEN_DECIMALS: '6',
        PAYMENT_CURRENCY: 'USDC',
        RADIO_STATION_TOKEN: peers.token,
      },
      close: () => peers.close(),
    }
  } catch (e) {
    await peers.close()
    throw e
  }
}
export type Chain = Awaited<ReturnType<typeof startChain>>
