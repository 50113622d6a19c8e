import type { Hex, LocalAccount } from 'viem'
import { createSiweMessage, type SiweMessage } from 'viem/siwe'
import { freshIp } from './requests'

/** Anything that answers web requests as the harness's `web` app does. */
type WebApp = { request(path: string, init?: RequestInit): Response | Promise<Response> ; /** Where the dashboard is (its messages name it): the harness's first APP_ORIGIN unless given. */ origin?: string }

/** The statements wallet proofs carry, written out here rather than imported, so the tests pin the contract. */
export const PROOF_STATEMENTS = {
  radio: 'Start a DJ radio session with this wallet.',
  paymentSession: 'Open a payment session with this wallet.',
} as const
export type ProofPurpose = keyof typeof PROOF_STATEMENTS

/** The harness's first APP_ORIGIN and its host: what a dashboard-issued message names. */
const ORIGIN = 'http://localhost:3000'
const DOMAIN = 'localhost:3000'

/** Signs a message as a wallet would: an EOA's `personal_sign`, or any function (a smart account's owner, ERC-6492). */
export type ProofSigner = LocalAccount | ((message: string) => Promise<Hex>)

/** A fresh nonce from `/api/auth/nonce` (a fresh client address, so the nonce limiter stays out of the way). */
export async function freshNonce(web: WebApp) {
  const res = await web.request('/api/auth/nonce', { headers: { 'cf-connecting-ip': freshIp() } })
  if (res.status !== 200) throw new Error(`nonce: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { nonce: string }).nonce
}

/**
 * The body fields `{message, signature}` proving `address` for `purpose`: an EIP-4361 message over a fresh nonce
 * (fields overridable: `statement: undefined` makes a plain sign-in message), signed by `signer`.
 */
export async function walletProof(web: WebApp, purpose: ProofPurpose, address: string, signer: ProofSigner, over: Partial<SiweMessage> = {}) {
  const nonce = over.nonce ?? (await freshNonce(web))
  const message = createSiweMessage({
    domain: web.origin ? new URL(web.origin).host : DOMAIN,
    uri: web.origin ?? ORIGIN,
    version: '1',
    chainId: 8453,
    address: address as Hex,
    nonce,
    issuedAt: new Date(),
    statement: PROOF_STATEMENTS[purpose],
    ...over,
  })
  const signature = typeof signer === 'function' ? await signer(message) : await signer.signMessage({ message })
  return { message, signature }
}
