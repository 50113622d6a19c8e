import { parseUnits, type Hex, type LocalAccount } from 'viem'
import { encodeVoucher, VOUCHER_HEADER, voucherTypedData } from '../../lib/payments/voucher'
import type { PaymentChain } from './payment-chain'
import { freshIp } from './requests'
import { walletProof, type ProofSigner } from './wallet-proof'

/** Anything that answers web requests as the harness's `web` app does. */
type WebApp = { request(path: string, init?: RequestInit): Response | Promise<Response>; origin?: string }

/** USDC has 6 decimals: USD strings to base units. */
export const units = (usd: string) => parseUnits(usd, 6)

/** A signed voucher as the `X-Session-Voucher` header carries it. */
export async function signVoucher(wallet: LocalAccount, sessionId: string, v: { cumulativeAmount: bigint; nonce: bigint }) {
  const signature = await wallet.signTypedData(voucherTypedData(sessionId, v))
  return encodeVoucher({ ...v, signature })
}

/** The headers that pay a gateway call from `sessionId` with `voucher` (omit one with `undefined`). */
export const sessionHeaders = (s: { sessionId: string; wallet: LocalAccount }, voucher?: string): Record<string, string> => ({
  'x-payment-method': 'session',
  'x-session-id': s.sessionId,
  'x-wallet-address': s.wallet.address,
  ...(voucher === undefined ? {} : { [VOUCHER_HEADER]: voucher }),
})

/**
 * `POST /api/wallet/sessions` from a fresh client address. With `prover`, the body gets a wallet proof of its
 * `walletAddress` signed by `prover` (who may not hold it); without, it is sent as it is.
 */
export async function postOpen(web: WebApp, body: unknown, prover?: ProofSigner) {
  const proof = prover && typeof body === 'object' && body ? await walletProof(web, 'paymentSession', (body as { walletAddress: string }).walletAddress, prover) : {}
  return web.request('/api/wallet/sessions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'cf-connecting-ip': freshIp() },
    body: typeof body === 'string' ? body : JSON.stringify({ ...proof, ...(body as object) }),
  })
}

/**
 * A wallet's open payment session, as a client keeps it: every `voucher(priceUsd)` raises the cumulative amount
 * by the price and takes the next nonce, as a careful client does.
 */
export class PaymentSessionClient {
  private cumulative = 0n
  private nonce = 0n

  constructor(
    readonly sessionId: string,
    readonly wallet: LocalAccount,
    readonly opened: Record<string, unknown>,
  ) {}

  /** Deposits `depositUsd` from `wallet` on `chain` and opens a session with it, proving the wallet; throws unless 201. */
  static async open(web: WebApp, chain: PaymentChain, wallet: LocalAccount, depositUsd: string) {
    const txHash = await chain.pay(wallet, { amount: depositUsd })
    const res = await postOpen(web, { walletAddress: wallet.address, txHash }, wallet)
    const body = (await res.json()) as Record<string, unknown>
    if (res.status !== 201) throw new Error(`open failed: ${res.status} ${JSON.stringify(body)}`)
    return new PaymentSessionClient(body.sessionId as string, wallet, { ...body, txHash })
  }

  /** The next voucher header for a call costing `priceUsd`. */
  async voucher(priceUsd: string) {
    this.cumulative += units(priceUsd)
    this.nonce += 1n
    return signVoucher(this.wallet, this.sessionId, { cumulativeAmount: this.cumulative, nonce: this.nonce })
  }

  /** The full headers of the next paid call. */
  async headers(priceUsd: string) {
    return sessionHeaders(this, await this.voucher(priceUsd))
  }
}
