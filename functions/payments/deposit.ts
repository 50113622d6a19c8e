import type { Context } from 'hono'
import type { Address } from 'viem'
import { assertBaseChain, BASE_CHAIN_ID, baseClient } from '../../lib/chain'
import type { AppEnv } from '../../lib/context'
import { ApiError } from '../../lib/http/errors'
import { errorFields, log } from '../../lib/log'
import type { PaymentSettings } from './config'
import { TransferError, verifyTransfer, type TransferRefusal, type VerifiedTransfer } from '../../lib/payments/transfer'

/** Why a deposit is refused (402 `DEPOSIT_INVALID`, `reason`), in the client's words. */
export const DEPOSIT_REFUSALS = {
  not_found: 'Deposit transaction not found, or not mined yet',
  reverted: 'Deposit transaction reverted',
  wrong_token: 'The deposit is not a transfer of the payment token',
  wrong_recipient: 'The deposit is not paid to the payment recipient',
  wrong_payer: 'The deposit is not from the wallet',
  empty: 'The deposit transfers nothing',
  memo_bound: 'The transfer carries a payment memo: it pays a gateway call',
} as const

const reasonOf = (r: Exclude<TransferRefusal, 'unavailable'>): keyof typeof DEPOSIT_REFUSALS =>
  r === 'underpaid' ? 'empty' : r === 'malformed' || r === 'unbound' ? 'not_found' : r

export const chainDown = () => new ApiError('CHAIN_UNAVAILABLE', 'The chain could not be reached')

/**
 * The deposit `txHash` as the chain shows it: a successful transfer of the payment token from `wallet` to the
 * payment recipient, of more than nothing (the largest such transfer in the transaction counts). No memo: the
 * session it opens is made for it, and the hash opens one session only (`chain_payments`). A direct transfer that
 * carries a memo (calldata after its arguments) is refused (`memo_bound`): it pays the gateway call its memo
 * names, and opening a session with it would leave that call "already paid".
 */
export async function verifyDeposit(c: Context<AppEnv>, settings: PaymentSettings, claim: { txHash: string; wallet: Address }): Promise<VerifiedTransfer & { chainId: number }> {
  const { config } = c.var.services
  const client = baseClient(config)
  // A BASE_RPC_URL pointed at another chain would take a testnet transfer for real money.
  await assertBaseChain(client, config.BASE_RPC_URL).catch((e: unknown) => {
    log.error('payment_session.chain_unusable', { requestId: c.var.requestId, ...errorFields(e) })
    throw chainDown()
  })
  try {
    const transfer = await verifyTransfer(client, { txHash: claim.txHash, token: settings.token, recipient: settings.recipient, payer: claim.wallet, minAmount: 1n, memo: null })
    return { ...transfer, chainId: BASE_CHAIN_ID }
  } catch (e) {
    if (!(e instanceof TransferError)) throw e
    if (e.reason === 'unavailable') {
      log.warn('payment_session.chain_unavailable', { requestId: c.var.requestId })
      throw chainDown()
    }
    const reason = reasonOf(e.reason)
    throw new ApiError('DEPOSIT_INVALID', { message: DEPOSIT_REFUSALS[reason], extra: { reason } })
  }
}
