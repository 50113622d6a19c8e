import { concatHex, encodeFunctionData, erc20Abi, keccak256, parseUnits, toHex, type Address, type Hex, type LocalAccount } from 'viem'
import { anvilClients, deployContract, startAnvil, type Anvil } from './anvil'
import { compileContracts } from './contracts/compile'

/** A payer's MPP secret: 32 random bytes of its own, revealed only in its credential. */
export const mppSecret = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)))

/**
 * The memo an MPP payer appends to its transfer for the challenge `id` (hex, 32 bytes): `keccak256(id ‖ secret)`.
 * Written here as a client writes it, not imported from the server, so the two are checked against each other.
 */
export const mppMemo = (id: string, secret: Hex): Hex => keccak256(concatHex([`0x${id.replace(/^0x/, '')}`, secret]))

/**
 * A local chain 8453 for gateway payments: anvil with a deployed 6-decimal USDC-like token (TestUsdc) and a
 * second token (the "wrong token" cases), wallets funded with both. `recipient` is the platform's wallet.
 */
export async function startPaymentChain() {
  const anvil = await startAnvil({ chainId: 8453, accounts: 12 })
  const artifact = compileContracts().TestUsdc
  const usdc = await deployContract(anvil, artifact)
  const otherToken = await deployContract(anvil, artifact)
  const recipient = anvil.accounts[11].address
  const payers = anvil.accounts.slice(1, 11)
  const { client, wallet } = anvilClients(anvil)
  for (const token of [usdc, otherToken]) {
    for (const payer of payers) {
      const hash = await wallet.writeContract({ address: token, abi: artifact.abi, functionName: 'mint', args: [payer.address, parseUnits('1000', 6)] })
      await client.waitForTransactionReceipt({ hash })
    }
  }
  return {
    anvil,
    usdc,
    otherToken,
    recipient,
    payers,
    /** The env a harness needs to take payments on this chain. */
    env: { BASE_RPC_URL: anvil.url, PAYMENT_RECIPIENT: recipient, PAYMENT_TOKEN_ADDRESS: usdc, PAYMENT_TOKEN_DECIMALS: '6', PAYMENT_CURRENCY: 'USDC' },
    /**
     * Sends `amount` (USD, e.g. '0.01') of `token` from `from` to `to` as a direct `transfer` call, with `memo` (32
     * bytes) appended to the calldata when given; the mined transaction's hash.
     */
    async pay(from: LocalAccount, opts: { amount: string; to?: Address; token?: Address; memo?: Hex }): Promise<Hex> {
      const { client, wallet } = anvilClients(anvil, from)
      const call = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [opts.to ?? recipient, parseUnits(opts.amount, 6)] })
      const hash = await wallet.sendTransaction({ to: opts.token ?? usdc, data: opts.memo ? concatHex([call, opts.memo]) : call })
      const receipt = await client.waitForTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`payment reverted: ${hash}`)
      return hash
    },
    close: () => anvil.close(),
  }
}

export type PaymentChain = Awaited<ReturnType<typeof startPaymentChain>>
export type { Anvil }
