import { and, eq, exists, or, sql } from 'drizzle-orm'
import type { Db } from '../../lib/db/rls'
import { accounts, users, userWallets } from '../../schema'

/** The caller's managed (CDP) wallet row, if any. Run as the user (RLS keeps it to their own row). */
export const managedWalletQuery = (db: Db, userId: string) =>
  db
    .select({ address: userWallets.address, walletId: userWallets.walletId, network: userWallets.network, createdAt: userWallets.createdAt })
    .from(userWallets)
    .where(eq(userWallets.userId, userId))
    .limit(1)

/** The wallet the caller signed in with (`POST /api/wallet-auth` links it as provider `wallet`), if any. */
export const signInWalletQuery = (db: Db, userId: string) =>
  db
    .select({ subject: accounts.providerAccountId })
    .from(accounts)
    .where(and(eq(accounts.userId, userId), eq(accounts.provider, 'wallet')))
    .orderBy(accounts.createdAt)
    .limit(1)


/**
 * Where the caller's wallet address comes from, in one query: their managed wallet (if any) and the wallet they
 * signed in with (if any). The user's own row anchors the joins, so a user with neither still gets one row.
 */
export const walletSourcesQuery = (db: Db, userId: string) =>
  db
    .select({ managedAddress: userWallets.address, managedNetwork: userWallets.network, signInSubject: accounts.providerAccountId })
    .from(users)
    .leftJoin(userWallets, eq(userWallets.userId, users.id))
    .leftJoin(accounts, and(eq(accounts.userId, users.id), eq(accounts.provider, 'wallet')))
    .where(eq(users.id, userId))
    .orderBy(accounts.createdAt)
    .limit(1)

/**
 * Whether `address` is a wallet the caller has proven (a wallet granted something must be): their
 * managed wallet (made or imported for them), or a wallet they signed in with (a signature over a server-issued
 * nonce linked it). One row when it is, none otherwise. Run as the user (RLS keeps both lookups to their rows).
 */
export const provenWalletQuery = (db: Db, userId: string, address: string) => {
  const lower = address.toLowerCase()
  return db
    .select({ id: users.id })
    .from(users)
    .where(
      and(
        eq(users.id, userId),
        or(
          exists(db.select({ one: sql`1` }).from(userWallets).where(and(eq(userWallets.userId, userId), sql`lower(${userWallets.address}) = ${lower}`))),
          exists(db.select({ one: sql`1` }).from(accounts).where(and(eq(accounts.userId, userId), eq(accounts.provider, 'wallet'), eq(accounts.providerAccountId, lower)))),
        ),
      ),
    )
    .limit(1)
}
