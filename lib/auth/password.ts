import bcrypt from 'bcryptjs'
import { sha256 } from '../crypto'

/**
 * bcrypt at `PASSWORD_HASH_COST` (default 10: ~90 ms of CPU per hash or check in V8, inside a Worker's
 * budget on the Standard plan; see README). Tests set cost 4. bcrypt reads only 72 bytes, so the secret
 * is first reduced to its base64 SHA-256 (44 characters): long passphrases differ in every byte that counts.
 */
async function prehash(secret: string) {
  return btoa(String.fromCharCode(...(await sha256(secret))))
}

export const hashSecret = async (secret: string, cost: number) => bcrypt.hash(await prehash(secret), cost)

export const verifySecret = async (secret: string, hash: string) => bcrypt.compare(await prehash(secret), hash)

// A real hash at the same cost to check against when the account has none, so timing tells nothing.
const decoys = new Map<number, Promise<string>>()
const decoy = (cost: number) => {
  if (!decoys.has(cost)) decoys.set(cost, hashSecret(crypto.randomUUID(), cost))
  return decoys.get(cost)!
}

export async function verifySecretOrDecoy(secret: string, hash: string | null | undefined, cost: number) {
  if (hash) return verifySecret(secret, hash)
  await verifySecret(secret, await decoy(cost))
  return false
}
