/** A passkey as its owner sees it (`PasskeyItemSchema`): never the public key or the counter. */
export const toPasskeyItem = (p: { id: string; label: string; createdAt: Date; lastUsedAt: Date | null }) => ({
  id: p.id,
  label: p.label,
  createdAt: p.createdAt.toISOString(),
  lastUsedAt: p.lastUsedAt?.toISOString() ?? null,
})
