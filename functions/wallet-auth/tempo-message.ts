/**
 * The Tempo (chain 4217) sign-in message, signed with `personal_sign` (EIP-191). Exactly these lines,
 * `\n`-separated, no trailing newline; `Issued At` is RFC 3339 in UTC (`Z`), as `Date#toISOString()` writes:
 *
 *   <domain> wants you to sign in with your wallet.
 *
 *   Address: <0x + 40 hex>
 *   Chain ID: 4217
 *   Nonce: <nonce from /api/auth/nonce>
 *   Issued At: <YYYY-MM-DDTHH:MM:SS(.sss)Z>
 */
export interface TempoMessage {
  domain: string
  address: `0x${string}`
  chainId: number
  nonce: string
  issuedAt: Date
}

export const createTempoMessage = (m: TempoMessage) =>
  `${m.domain} wants you to sign in with your wallet.\n\nAddress: ${m.address}\nChain ID: ${m.chainId}\n` +
  `Nonce: ${m.nonce}\nIssued At: ${m.issuedAt.toISOString()}`

// One line each; the whole is anchored at both ends (no `m` flag: `$` is the end of the text).
const LINES = [
  '(?<domain>[a-zA-Z0-9.-]+(?::[0-9]{1,5})?) wants you to sign in with your wallet\\.',
  '',
  'Address: (?<address>0x[0-9a-fA-F]{40})',
  'Chain ID: (?<chainId>[0-9]{1,12})',
  'Nonce: (?<nonce>[a-zA-Z0-9]{1,128})',
  'Issued At: (?<issuedAt>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]{1,9})?Z)',
]
const FORMAT = new RegExp(`^${LINES.join('\\n')}$`)

/** The message's fields, or null when it is not exactly the format above. */
export function parseTempoMessage(text: string): TempoMessage | null {
  const g = FORMAT.exec(text)?.groups
  if (!g) return null
  const issuedAt = new Date(g.issuedAt)
  if (Number.isNaN(issuedAt.getTime())) return null
  return { domain: g.domain, address: g.address as `0x${string}`, chainId: Number(g.chainId), nonce: g.nonce, issuedAt }
}
