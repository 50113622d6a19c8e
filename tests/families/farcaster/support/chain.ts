import { parseAbi, type Address } from 'viem'
import { type Anvil, anvilClients, deployContract } from '../../../support/anvil'
import { compileContracts } from '../../../support/contracts/compile'

const transferAbi = parseAbi(['function transfer(address to, uint256 value) returns (bool)'])

/**
 * Deploys GateToken (`tests/support/contracts/GateToken.sol`) from the first dev account, minting `supply`
 * to it, then sends each `grants` amount to its address. Returns the token's address.
 */
export async function deployGateToken(anvil: Anvil, supply: bigint, grants: Array<[Address, bigint]>) {
  const { client, wallet } = anvilClients(anvil)
  const token = await deployContract(anvil, compileContracts().GateToken, ['Gate Token', 'GATE', wallet.account.address, supply])
  for (const [to, amount] of grants) {
    const hash = await wallet.writeContract({ address: token, abi: transferAbi, functionName: 'transfer', args: [to, amount] })
    await client.waitForTransactionReceipt({ hash })
  }
  return token
}
