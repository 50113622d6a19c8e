import { getAddress, isAddress, type Address } from 'viem'
import type { Config } from '../../lib/config'

/** Where gateway payments go and in what: an ERC-20 on chain 8453, priced 1 token = 1 USD (USDC by default). */
export interface PaymentSettings {
  recipient: Address
  token: Address
  /** The token's decimals: USD amounts become base units with these. */
  decimals: number
  currency: string
}

/** The configured payment settings, or null when payments are not configured (no or no valid `PAYMENT_RECIPIENT`). */
export function paymentSettings(config: Config): PaymentSettings | null {
  const recipient = config.PAYMENT_RECIPIENT
  const token = config.PAYMENT_TOKEN_ADDRESS
  if (!recipient || !isAddress(recipient, { strict: false }) || !isAddress(token, { strict: false })) return null
  return { recipient: getAddress(recipient), token: getAddress(token), decimals: config.PAYMENT_TOKEN_DECIMALS, currency: config.PAYMENT_CURRENCY }
}
