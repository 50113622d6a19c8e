import { encodeFunctionData, erc20Abi, parseUnits, type Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { baseClient } from '../../lib/chain'
import { randomHex } from '../../lib/crypto'
import { TransferError, verifyTransfer, type TransferClaim } from '../../lib/payments/transfer'
import { anvilAvailable, anvilClients } from '../support/anvil'
import { startPaymentChain, type PaymentChain } from '../support/payment-chain'

/** `verifyTransfer` against a real chain (anvil on 8453 with a 6-decimal token): what it accepts and each refusal. */
describe.skipIf(!anvilAvailable)('verifyTransfer (anvil chain 8453)', () => {
  let chain: PaymentChain
  let client: ReturnType<typeof baseClient>
  const memo = `0x${randomHex(32)}` as Hex
  let paid: Hex

  beforeAll(async () => {
    chain = await startPaymentChain()
    client = baseClient({ BASE_RPC_URL: chain.anvil.url })
    paid = await chain.pay(chain.payers[0], { amount: '0.25', memo })
  })
  afterAll(() => chain?.close())

  const claim = (over: Partial<TransferClaim> = {}): TransferClaim => ({ txHash: paid, token: chain.usdc, recipient: chain.recipient, minAmount: parseUnits('0.25', 6), memo, ...over })
  async function refusal(over: Partial<TransferClaim>, rpc?: ReturnType<typeof baseClient>) {
    const e = await verifyTransfer(rpc ?? client, claim(over)).catch((err: unknown) => err)
    expect(e).toBeInstanceOf(TransferError)
    return (e as TransferError).reason
  }

  it('accepts a transfer of at least the amount, to the recipient, in the token, with the memo; says who paid and when', async () => {
    const ok = await verifyTransfer(client, claim({ payer: chain.payers[0].address }))
    expect(ok).toMatchObject({ txHash: paid.toLowerCase(), payer: chain.payers[0].address, recipient: chain.recipient, token: chain.usdc, amount: 250_000n })
    expect(ok.blockNumber).toBeGreaterThan(0n)
    expect(ok.blockTimestamp).toBeGreaterThan(1_600_000_000)
    // less than what was paid is fine too; no memo asked, none checked
    expect((await verifyTransfer(client, claim({ minAmount: 1n, memo: undefined }))).amount).toBe(250_000n)
  })

  it('refuses: not a hash, unknown hash, underpaid, another token, another recipient, another payer, another memo', async () => {
    expect(await refusal({ txHash: 'nope' })).toBe('malformed')
    expect(await refusal({ txHash: `0x${randomHex(32)}` })).toBe('not_found')
    expect(await refusal({ minAmount: parseUnits('0.250001', 6) })).toBe('underpaid')
    expect(await refusal({ token: chain.otherToken })).toBe('wrong_token')
    expect(await refusal({ recipient: chain.payers[5].address })).toBe('wrong_recipient')
    expect(await refusal({ payer: chain.payers[1].address })).toBe('wrong_payer')
    expect(await refusal({ memo: `0x${randomHex(32)}` })).toBe('unbound')
  })

  it('refuses a transfer without the memo, and one whose memo is not the calldata’s last 32 bytes', async () => {
    const bare = await chain.pay(chain.payers[1], { amount: '0.25' })
    expect(await refusal({ txHash: bare })).toBe('unbound')
    const { wallet, client: c } = anvilClients(chain.anvil, chain.payers[1])
    const call = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [chain.recipient, parseUnits('0.25', 6)] })
    const padded = await wallet.sendTransaction({ to: chain.usdc, data: `${call}${memo.slice(2)}00` as Hex })
    await c.waitForTransactionReceipt({ hash: padded })
    expect(await refusal({ txHash: padded })).toBe('unbound')
  })

  it('refuses a reverted transaction', async () => {
    const { wallet, client: c } = anvilClients(chain.anvil, chain.payers[2])
    const call = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [chain.recipient, parseUnits('5000', 6)] })
    const reverted = await wallet.sendTransaction({ to: chain.usdc, data: `${call}${memo.slice(2)}` as Hex, gas: 200_000n })
    expect((await c.waitForTransactionReceipt({ hash: reverted })).status).toBe('reverted')
    expect(await refusal({ txHash: reverted })).toBe('reverted')
  })

  it('a chain that does not answer is `unavailable`, not a refusal of the payment', async () => {
    expect(await refusal({}, baseClient({ BASE_RPC_URL: 'http://127.0.0.1:9' }))).toBe('unavailable')
  })
})
