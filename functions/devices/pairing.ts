const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
// The largest multiple of 36 below 256: bytes at or above it are dropped, so every character is equally likely.
const UNBIASED_BELOW = 256 - (256 % ALPHABET.length)

export const PAIRING_CODE_LENGTH = 6

/** A pairing code from the CSPRNG: `PAIRING_CODE_LENGTH` characters of [A-Z0-9], rejection-sampled. */
export function newPairingCode(length = PAIRING_CODE_LENGTH) {
  let code = ''
  while (code.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < UNBIASED_BELOW && code.length < length) code += ALPHABET[byte % ALPHABET.length]
    }
  }
  return code
}

export const pairingUrl = (code: string, deviceId: string) =>
  `/dashboard/devices?pair=${encodeURIComponent(code)}&id=${encodeURIComponent(deviceId)}`
