import { eq, sql } from 'drizzle-orm'
import type { Context } from 'hono'
import type { SignedInEnv } from '../../../lib/context'
import { asUser } from '../../../lib/db/rls'
import { BYOK_PURPOSE } from '../../../lib/billing/byok'
import { seal } from '../../../lib/secret-box'
import { providerKeys } from '../../../schema'


/** `enable-byok`: seals the provider key (never stored, returned or logged in the clear) and replaces any earlier one. */
export async function enableByok(c: Context<SignedInEnv>, apiKey: string, provider: string) {
  const me = c.var.user.id
  const { keyId, sealed } = await seal(c.var.services.config, apiKey, me, BYOK_PURPOSE)
  await asUser(c, (tx) =>
    tx
      .insert(providerKeys)
      .values({ userId: me, provider, keyId, sealed })
      .onConflictDoUpdate({ target: providerKeys.userId, set: { provider, keyId, sealed, updatedAt: sql`now()` } }),
  )
  return { success: true as const, message: `BYOK enabled for ${provider}` }
}

/** `disable-byok`: removes the stored key (answers the same when there was none). */
export async function disableByok(c: Context<SignedInEnv>) {
  await asUser(c, (tx) => tx.delete(providerKeys).where(eq(providerKeys.userId, c.var.user.id)))
  return { success: true as const, message: 'BYOK disabled' }
}
