import { concatHex, createClient, encodeFunctionData, erc20Abi, http, parseUnits, type Hex } from 'viem'
import { base } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { baseClient } from '../../lib/chain'
import { randomHex } from '../../lib/crypto'
import { TransferError, verifyTransfer, type TransferClaim } from '../../lib/payments/transfer'
import { anvilAvailable, anvilClients, deployContract } from '../support/anvil'
import { compileContracts } from '../support/contracts/compile'
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
    // less than what was paid is fine too
    expect((await verifyTransfer(client, claim({ minAmount: 1n }))).amount).toBe(250_000n)
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

  /** A client on the chain that records the RPC methods it is asked. */
  function countingClient() {
    const methods: string[] = []
    const onFetchRequest = async (request: Request) => {
      for (const call of [await request.clone().json()].flat() as Array<{ method: string }>) methods.push(call.method)
    }
    return { methods, client: createClient({ chain: base, transport: http(chain.anvil.url, { onFetchRequest }) }) as ReturnType<typeof baseClient> }
  }

  it('bound to nothing (`memo: null`, a deposit or a fee): a plain transfer passes; one carrying a memo or any trailing bytes is `memo_bound`', async () => {
    const payer = chain.payers[3]
    const plain = await chain.pay(payer, { amount: '0.25' })
    expect(await verifyTransfer(client, claim({ txHash: plain, memo: null, payer: payer.address }))).toMatchObject({ payer: payer.address, amount: 250_000n })
    // `paid` carries a memo (an MPP payment); so does a transfer with a single byte after its arguments
    expect(await refusal({ memo: null })).toBe('memo_bound')
    const { wallet, client: c } = anvilClients(chain.anvil, payer)
    const call = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [chain.recipient, parseUnits('0.25', 6)] })
    const oneByte = await wallet.sendTransaction({ to: chain.usdc, data: concatHex([call, '0x01']) })
    await c.waitForTransactionReceipt({ hash: oneByte })
    expect(await refusal({ txHash: oneByte, memo: null })).toBe('memo_bound')
    const e = (await verifyTransfer(client, claim({ memo: null })).catch((err: unknown) => err)) as TransferError
    expect(e.message).toBe('The transfer carries a payment memo: it pays a gateway call')
  })

  it('the receipt’s refusals come first: the transaction is read only once they pass, and only when it was sent to the token', async () => {
    const counting = countingClient()
    const read = () => counting.methods.filter((m) => m === 'eth_getTransactionByHash').length
    // `paid` is payers[0]'s: claimed for another payer or above its amount, its calldata is never read
    expect(await refusal({ memo: null, payer: chain.payers[1].address }, counting.client)).toBe('wrong_payer')
    expect(await refusal({ memo: null, minAmount: parseUnits('1', 6) }, counting.client)).toBe('underpaid')
    expect(read()).toBe(0)
    expect(await refusal({ memo: null }, counting.client)).toBe('memo_bound')
    expect(read()).toBe(1)
  })

  it('a transfer made through a smart wallet (an internal call) has no memo to read: it passes unread as a deposit or fee, and never pays a memo-bound claim', async () => {
    const owner = chain.payers[4]
    const account = await deployContract(chain.anvil, compileContracts().TestAccount, [owner.address])
    const { wallet, client: c } = anvilClients(chain.anvil, owner)
    const fund = await wallet.writeContract({ address: chain.usdc, abi: erc20Abi, functionName: 'transfer', args: [account, parseUnits('1', 6)] })
    await c.waitForTransactionReceipt({ hash: fund })
    // The account calls the token; even bytes after the transfer's arguments inside its call are no memo of the transaction.
    const call = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [chain.recipient, parseUnits('0.25', 6)] })
    const hash = await wallet.writeContract({ address: account, abi: compileContracts().TestAccount.abi, functionName: 'execute', args: [chain.usdc, 0n, concatHex([call, memo])] })
    expect((await c.waitForTransactionReceipt({ hash })).status).toBe('success')

    const counting = countingClient()
    expect(await verifyTransfer(counting.client, claim({ txHash: hash, memo: null, payer: account }))).toMatchObject({ payer: account, amount: 250_000n })
    // The receipt is the whole proof here: no calldata to read, and no block (nothing uses when it was mined).
    expect(counting.methods).toEqual(['eth_getTransactionReceipt'])
    expect(await refusal({ txHash: hash }, counting.client)).toBe('unbound')
    expect(counting.methods).not.toContain('eth_getTransactionByHash')
  })

  it('a chain that does not answer is `unavailable`, not a refusal of the payment', async () => {
    expect(await refusal({}, baseClient({ BASE_RPC_URL: 'http://127.0.0.1:9' }))).toBe('unavailable')
  })
})
