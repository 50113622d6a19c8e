import { createPublicClient, createWalletClient, encodeFunctionData, hashMessage, http, type Hex, type LocalAccount } from 'viem'
import { base } from 'viem/chains'
import { serializeErc6492Signature } from 'viem/utils'
import type { Anvil } from '../../support/anvil'
import { compileContracts } from '../../support/contracts/compile'

/**
 * ERC-1271 test accounts on the local chain: the factory is deployed by a funded anvil account; accounts
 * are deployed on demand or stay counterfactual (ERC-6492).
 */
export async function smartAccounts(anvil: Anvil) {
  const { TestAccountFactory: factoryArtifact } = compileContracts()
  const deployer = anvil.accounts[0]
  const transport = http(anvil.url)
  const client = createPublicClient({ chain: base, transport })
  const wallet = createWalletClient({ chain: base, transport, account: deployer })
  const abi = factoryArtifact.abi

  const hash = await wallet.deployContract({ abi, bytecode: factoryArtifact.bytecode })
  const factory = (await client.waitForTransactionReceipt({ hash })).contractAddress!

  const addressOf = (owner: LocalAccount, salt: Hex) =>
    client.readContract({ address: factory, abi, functionName: 'getAddress', args: [owner.address, salt] }) as Promise<Hex>
  const deployData = (owner: LocalAccount, salt: Hex) => encodeFunctionData({ abi, functionName: 'deploy', args: [owner.address, salt] })

  return {
    client,
    factory,
    addressOf,
    async deploy(owner: LocalAccount, salt: Hex) {
      const tx = await wallet.sendTransaction({ to: factory, data: deployData(owner, salt) })
      await client.waitForTransactionReceipt({ hash: tx })
      return addressOf(owner, salt)
    },
    /** What TestAccount accepts: the owner's ECDSA signature of the EIP-191 message hash (= its personal_sign). */
    signAsOwner: (owner: LocalAccount, message: string) => owner.sign!({ hash: hashMessage(message) }),
    /** The same, wrapped for an account that does not exist yet: factory + `deploy(owner, salt)` calldata. */
    async sign6492(owner: LocalAccount, salt: Hex, message: string, signer: LocalAccount = owner) {
      const signature = await signer.sign!({ hash: hashMessage(message) })
      return serializeErc6492Signature({ address: factory, data: deployData(owner, salt), signature })
    },
  }
}
