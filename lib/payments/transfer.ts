import { erc20Abi, getAddress, isAddressEqual, isHash, parseEventLogs, type Address, type Hex } from 'viem'
import { getTransaction, getTransactionReceipt } from 'viem/actions'
import type { baseClient } from '../chain'

/** Why a payment was refused: each is a client's mistake except `unavailable` (the chain did not answer). */
export type TransferRefusal =
  | 'malformed' // not a transaction hash
  | 'not_found' // no such transaction, or not mined yet
  | 'reverted'
  | 'wrong_token' // no Transfer of the configured token in it
  | 'wrong_recipient'
  | 'wrong_payer'
  | 'underpaid'
  | 'unbound' // the transfer does not carry the expected memo
  | 'memo_bound' // the transfer carries a payment memo: it pays a gateway call, not this
  | 'unavailable'

export class TransferError extends Error {
  constructor(readonly reason: TransferRefusal, message?: string) {
    super(message ?? reason)
    this.name = 'TransferError'
  }
}

export interface TransferClaim {
  txHash: string
  token: Address
  recipient: Address
  /** Base units the transfer must reach. */
  minAmount: bigint
  /** When set, the transfer must come from this address. */
  payer?: Address
  /**
   * What the payment is bound to, which every caller must say. A memo (32 bytes): the transaction must be a direct
   * `transfer(recipient, amount)` call on the token with these bytes appended to its calldata (ERC-20 contracts
   * ignore trailing calldata): the payment names what it pays for (an MPP call), so a transfer made for something
   * else cannot be presented here. `null`: the payment is for whatever presents it first (a deposit, a radio fee),
   * so a direct transfer that carries anything after its arguments is refused (`memo_bound`): its memo names the
   * gateway call it pays, and taking it here would leave that call "already paid". A transfer made through a smart
   * wallet (an internal call: the transaction is not sent to the token) has no memo to read and passes.
   */
  memo: Hex | null
}

export interface VerifiedTransfer {
  txHash: Hex
  payer: Address
  recipient: Address
  token: Address
  amount: bigint
  blockNumber: bigint
}

const TRANSFER_SELECTOR = '0xa9059cbb'
// selector + two 32-byte words (recipient, amount)
const TRANSFER_CALLDATA_HEX = 2 + 8 + 64 * 2

/**
 * Verifies on chain that `claim.txHash` is a successful ERC-20 transfer of at least `minAmount` of `token` to
 * `recipient` (from `payer`, when given), bound as `memo` says. Reads the receipt (the Transfer event is the proof
 * of the amount moved, whatever contract made the call), then, once everything the receipt can refuse has passed,
 * the transaction's calldata when it was sent to the token itself (only there can a memo be). Throws
 * TransferError. It does not mark the payment used: callers record the hash once (chain_payments) in the
 * same transaction as what it pays for.
 */
export async function verifyTransfer(client: ReturnType<typeof baseClient>, claim: TransferClaim): Promise<VerifiedTransfer> {
  if (!isHash(claim.txHash)) throw new TransferError('malformed', 'Not a transaction hash')
  const hash = claim.txHash.toLowerCase() as Hex
  const receipt = await getTransactionReceipt(client, { hash }).catch((e: unknown) => {
    throw isNotFound(e) ? new TransferError('not_found', 'Transaction not found or not mined') : new TransferError('unavailable', 'The chain did not answer')
  })
  if (receipt.status !== 'success') throw new TransferError('reverted', 'Transaction reverted')

  const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter((l) => isAddressEqual(l.address, claim.token))
  if (transfers.length === 0) throw new TransferError('wrong_token', 'No transfer of the payment token')
  const toRecipient = transfers.filter((l) => isAddressEqual(l.args.to, claim.recipient))
  if (toRecipient.length === 0) throw new TransferError('wrong_recipient', 'The transfer is not to the payment recipient')
  const fromPayer = claim.payer ? toRecipient.filter((l) => isAddressEqual(l.args.from, claim.payer!)) : toRecipient
  if (fromPayer.length === 0) throw new TransferError('wrong_payer', 'The transfer is not from the paying wallet')
  const best = fromPayer.reduce((a, b) => (b.args.value > a.args.value ? b : a))
  if (best.args.value < claim.minAmount) throw new TransferError('underpaid', 'The transfer is less than the price')

  // The receipt's `to` is the transaction's: a transaction not sent to the token carries no memo of its own.
  const direct = !!receipt.to && isAddressEqual(receipt.to, claim.token)
  if (claim.memo) await checkMemo(client, hash, direct, claim.memo)
  else if (direct) await refuseMemo(client, hash)

  // No block read: nothing that records a payment uses when it was mined.
  return {
    txHash: hash,
    payer: getAddress(best.args.from),
    recipient: getAddress(best.args.to),
    token: getAddress(claim.token),
    amount: best.args.value,
    blockNumber: receipt.blockNumber,
  }
}

/** The calldata of a transaction sent to the token (lower case hex). */
async function inputOf(client: ReturnType<typeof baseClient>, hash: Hex) {
  const tx = await getTransaction(client, { hash }).catch(() => {
    throw new TransferError('unavailable', 'The chain did not answer')
  })
  return tx.input.toLowerCase()
}

async function checkMemo(client: ReturnType<typeof baseClient>, hash: Hex, direct: boolean, memo: Hex) {
  const unbound = () => new TransferError('unbound', 'The transfer does not carry this payment’s memo')
  if (!direct) throw unbound()
  const input = await inputOf(client, hash)
  const tail = memo.toLowerCase().replace(/^0x/, '')
  if (!input.startsWith(TRANSFER_SELECTOR) || input.length !== TRANSFER_CALLDATA_HEX + tail.length || !input.endsWith(tail)) throw unbound()
}

/** A direct `transfer` with anything after its two arguments carries a memo: it pays what its memo names. */
async function refuseMemo(client: ReturnType<typeof baseClient>, hash: Hex) {
  const input = await inputOf(client, hash)
  if (input.startsWith(TRANSFER_SELECTOR) && input.length > TRANSFER_CALLDATA_HEX) {
    throw new TransferError('memo_bound', 'The transfer carries a payment memo: it pays a gateway call')
  }
}

const isNotFound = (e: unknown) => {
  const name = (e as { name?: string })?.name ?? ''
  return name === 'TransactionReceiptNotFoundError' || name === 'TransactionNotFoundError'
}
