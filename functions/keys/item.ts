import { ApiError } from '../../lib/http/errors'
import type { ApiKey } from '../../schema'

/** A key as its owner sees it (`ApiKeyItemSchema`): never the raw key, never a hash. */
export const toItem = (k: Pick<ApiKey, 'id' | 'name' | 'prefix' | 'createdAt' | 'lastUsedAt'>) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
})

// Someone else's key answers exactly like an unknown one, so ids reveal nothing.
export const keyNotFound = () => new ApiError('NOT_FOUND', 'API key not found')
