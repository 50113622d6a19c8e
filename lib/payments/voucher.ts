import { base64url } from 'jose'
import { isHex, recoverTypedDataAddress, type Address, type Hex } from 'viem'
import { BASE_CHAIN_ID } from '../chain'

/**
 * A payment-session voucher: the session's wallet signs (EIP-712) that the platform may have taken up to
 * `cumulativeAmount` base units from the session in all, and names the call with a `nonce` used once.
 */
export interface Voucher {
  cumulativeAmount: bigint
  nonce: bigint
  signature: Hex
}

/** The request header a voucher travels in: `base64url(JSON {cumulativeAmount, nonce, signature})`. */
export const VOUCHER_HEADER = 'X-Session-Voucher'

/** The EIP-712 domain every voucher is signed under. Fixed, so a client needs no per-deployment setting. */
export const VOUCHER_DOMAIN = { name: 'Platform', version: '1', chainId: BASE_CHAIN_ID } as const

export const VOUCHER_TYPES = {
  Voucher: [
    { name: 'sessionId', type: 'string' },
    { name: 'cumulativeAmount', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
  ],
} as const

/** The typed data a wallet signs for `voucher` on `sessionId` (viem's `signTypedData` takes it as is). */
export const voucherTypedData = (sessionId: string, voucher: Pick<Voucher, 'cumulativeAmount' | 'nonce'>) => ({
  domain: VOUCHER_DOMAIN,
  types: VOUCHER_TYPES,
  primaryType: 'Voucher' as const,
  message: { sessionId, cumulativeAmount: voucher.cumulativeAmount, nonce: voucher.nonce },
})

/** How the header is written out; amounts as decimal strings (JSON numbers lose precision past 2^53). */
export const encodeVoucher = (v: Voucher) =>
  base64url.encode(JSON.stringify({ cumulativeAmount: v.cumulativeAmount.toString(), nonce: v.nonce.toString(), signature: v.signature }))

// A header this long is no voucher: two 78-digit numbers and a 65-byte signature fit in far less.
const MAX_HEADER = 1024
const UINT256_MAX = 2n ** 256n - 1n
const SIGNATURE_HEX_LENGTH = 2 + 65 * 2

/** A uint256 from a decimal string (or a safe JSON integer); null for anything else. */
function uint256(value: unknown): bigint | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : null
  if (typeof value !== 'string' || !/^[0-9]{1,78}$/.test(value)) return null
  const n = BigInt(value)
  return n <= UINT256_MAX ? n : null
}

/** The voucher a header carries, or null when it is not one (garbled base64url or JSON, fields missing or out of range). */
export function decodeVoucher(header: string | undefined): Voucher | null {
  if (!header || header.length > MAX_HEADER) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder().decode(base64url.decode(header)))
  } catch {
    return null
  }
  if (!parsed || typeof parsed !== 'object') return null
  const { cumulativeAmount, nonce, signature } = parsed as Record<string, unknown>
  const cumulative = uint256(cumulativeAmount)
  const n = uint256(nonce)
  if (cumulative === null || n === null) return null
  if (typeof signature !== 'string' || signature.length !== SIGNATURE_HEX_LENGTH || !isHex(signature)) return null
  return { cumulativeAmount: cumulative, nonce: n, signature }
}

/**
 * Who signed `voucher` for `sessionId`, recovered offline (an EOA signature: no RPC per call), or null when the
 * signature does not recover. The caller compares it with the session's wallet: a voucher signed for another
 * session recovers to some other address.
 */
export async function voucherSigner(sessionId: string, voucher: Voucher): Promise<Address | null> {
  try {
    return await recoverTypedDataAddress({ ...voucherTypedData(sessionId, voucher), signature: voucher.signature })
  } catch {
    return null
  }
}
