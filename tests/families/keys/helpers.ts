import { expect } from 'vitest'
import { apiKeys } from '../../../schema'
import { webClient } from '../../support/client'
import type { Harness, SeededUser } from '../../support/harness'
import { call } from '../../support/requests'

export interface CreatedKey {
  id: string
  name: string
  key: string
  prefix: string
  createdAt: string
}

export interface KeyItem {
  id: string
  name: string
  prefix: string
  createdAt: string
  lastUsedAt: string | null
}

export async function createKey(h: Harness, user: SeededUser, name = 'key'): Promise<CreatedKey> {
  const res = await webClient(h, user).api.keys.$post({ json: { name } })
  expect(res.status).toBe(201)
  return (await res.json()) as CreatedKey
}

export async function listKeys(h: Harness, user: SeededUser): Promise<KeyItem[]> {
  const res = await webClient(h, user).api.keys.$get()
  expect(res.status).toBe(200)
  return ((await res.json()) as { keys: KeyItem[] }).keys
}

export const validate = (h: Harness, apiKey: unknown, headers?: Record<string, string>) =>
  call(h, 'POST', '/api/keys/validate', { body: { apiKey }, headers })

/**
 * `n` keys stored directly (fake hashes), for tests about the limit: creating them through the API would
 * spend the per-user create rate limit.
 */
export async function seedKeys(h: Harness, userId: string, n: number) {
  const rows = Array.from({ length: n }, (_, i) => {
    const tag = crypto.randomUUID().replaceAll('-', '')
    return { userId, name: `seeded${i}`, prefix: `sk_${tag.slice(0, 7)}`, keyHash: 'not-a-bcrypt-hash', keySha256: tag + tag }
  })
  return h.db.insert(apiKeys).values(rows).returning({ id: apiKeys.id })
}
