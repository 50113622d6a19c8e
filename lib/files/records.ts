import { and, desc, eq, lt, sql } from 'drizzle-orm'
import type { Db } from '../db/client'
import { type Reader, withUser } from '../db/rls'
import { files, storageUsage } from '../../schema'

/**
 * The `files` records and the `storage_usage` row, always as their user (row isolation): the invariant kept here is
 * that `storage_usage.bytes` is the sum of the `size` of the user's records, pending ones included (a pending
 * record's size is the bytes reserved for it). Every change to one moves the other in the same transaction, and
 * bytes are given back only by deleting a record, so they are given back exactly once; `startUpload` recounts.
 */
export type FileRow = typeof files.$inferSelect

/** A pending record older than this is an upload that died with its process: the next upload sweeps it. */
export const STALE_PENDING_MS = 24 * 60 * 60 * 1000
/** Newest files a list answers with (`count` and `totalSize` still cover them all). */
export const MAX_LISTED_FILES = 1000

export interface UploadStart {
  /** Bytes the user's records hold now, pending included. */
  usedBytes: number
  /** Objects of stale pending records just removed: delete them from storage (best effort). */
  staleKeys: string[]
}

/**
 * The user's usage, in one transaction: stale pending records are swept, then the usage row is
 * recounted from the records. The recount heals what the invariant cannot see: records removed by a cascade (an
 * agent deleted with its files) and stale reservations. It is safe beside concurrent uploads because it first locks
 * the usage row, which every writer takes in the transaction that changes the records: once it holds the lock, the
 * records it sums (read by the next statement) include every reservation made before it, and none is made during it.
 */
export function startUpload(db: Db, userId: string, now = Date.now()): Promise<UploadStart> {
  return withUser(db, userId, async (tx) => {
    const stale = await tx
      .delete(files)
      .where(and(eq(files.userId, userId), eq(files.status, 'pending'), lt(files.createdAt, new Date(now - STALE_PENDING_MS))))
      .returning({ storageKey: files.storageKey })
    const [locked] = await tx.select({ bytes: storageUsage.bytes }).from(storageUsage).where(eq(storageUsage.userId, userId)).for('update')
    let usedBytes = 0
    if (locked) {
      const [row] = await tx
        .update(storageUsage)
        .set({ bytes: sql`(select coalesce(sum(${files.size}), 0) from ${files} where ${files.userId} = ${userId})`, updatedAt: sql`now()` })
        .where(eq(storageUsage.userId, userId))
        .returning({ bytes: storageUsage.bytes })
      usedBytes = row.bytes
    }
    return { usedBytes, staleKeys: stale.map((r) => r.storageKey) }
  })
}

/**
 * Reserves `record.size` bytes of the user's quota and records the upload as `pending`, in one transaction: one
 * conditional upsert of the usage row (it adds the bytes only while the total stays within `limitBytes`; concurrent
 * uploads queue on the row's lock and each sees the others' reservations), then the record. Over the quota, nothing
 * changes and the answer carries the usage that refused it.
 */
export function reserveUpload(
  db: Db,
  userId: string,
  limitBytes: number,
  record: Omit<typeof files.$inferInsert, 'status' | 'userId'>,
): Promise<{ reserved: true } | { reserved: false; usedBytes: number }> {
  const bytes = record.size
  return withUser(db, userId, async (tx) => {
    const [row] =
      bytes > limitBytes
        ? []
        : await tx
            .insert(storageUsage)
            .values({ userId, bytes })
            .onConflictDoUpdate({
              target: storageUsage.userId,
              set: { bytes: sql`${storageUsage.bytes} + ${bytes}`, updatedAt: sql`now()` },
              setWhere: sql`${storageUsage.bytes} + ${bytes} <= ${limitBytes}`,
            })
            .returning({ bytes: storageUsage.bytes })
    if (!row) {
      const [usage] = await tx.select({ bytes: storageUsage.bytes }).from(storageUsage).where(eq(storageUsage.userId, userId))
      return { reserved: false as const, usedBytes: usage?.bytes ?? 0 }
    }
    await tx.insert(files).values({ ...record, userId, status: 'pending' })
    return { reserved: true as const }
  })
}

/**
 * The upload's object is complete: the pending record becomes `stored` with its exact size, and the reserved bytes
 * it did not use go back. (The user may change a record's `status` only, by column grant, and the size is known
 * only now: so the pending record is replaced by the stored one, same id, in one transaction.) Null when the
 * pending record is gone (swept as stale, or its agent deleted): the caller removes the object.
 */
export function markStored(db: Db, userId: string, fileId: string, size: number): Promise<FileRow | null> {
  return withUser(db, userId, async (tx) => {
    const [pending] = await tx.delete(files).where(and(eq(files.id, fileId), eq(files.status, 'pending'))).returning()
    if (!pending) return null
    const [stored] = await tx.insert(files).values({ ...pending, size, status: 'stored', createdAt: sql`now()` }).returning()
    if (pending.size > size) await giveBack(tx, userId, pending.size - size)
    return stored
  })
}

/** A failed upload: its pending record goes, and its reserved bytes with it. */
export function releasePending(db: Db, userId: string, fileId: string): Promise<void> {
  return withUser(db, userId, async (tx) => {
    const [gone] = await tx.delete(files).where(and(eq(files.id, fileId), eq(files.status, 'pending'))).returning({ size: files.size })
    if (gone) await giveBack(tx, userId, gone.size)
  })
}

/** Deletes one of the user's stored records and gives its bytes back; its storage key, or null when there is none. */
export function removeStored(db: Db, userId: string, fileId: string): Promise<string | null> {
  return withUser(db, userId, async (tx) => {
    const [gone] = await tx
      .delete(files)
      .where(and(eq(files.id, fileId), eq(files.userId, userId), eq(files.status, 'stored')))
      .returning({ storageKey: files.storageKey, size: files.size })
    if (!gone) return null
    await giveBack(tx, userId, gone.size)
    return gone.storageKey
  })
}

/** One of the user's stored records (another user's reads as absent). */
export async function findStored(reader: Reader, userId: string, fileId: string): Promise<FileRow | null> {
  const rows = await reader.asUser(userId, (db) =>
    db.select().from(files).where(and(eq(files.id, fileId), eq(files.userId, userId), eq(files.status, 'stored'))).limit(1),
  )
  return rows[0] ?? null
}

/** The user's stored files (of one agent, or all), newest first, with the count and bytes of all of them: one statement. */
export async function listStored(reader: Reader, userId: string, agentId?: string) {
  const rows = await reader.asUser(userId, (db) =>
    db
      .select({
        file: files,
        count: sql<number>`count(*) over ()`.mapWith(Number),
        totalSize: sql<number>`sum(${files.size}) over ()`.mapWith(Number),
      })
      .from(files)
      .where(and(eq(files.userId, userId), eq(files.status, 'stored'), agentId === undefined ? undefined : eq(files.agentId, agentId)))
      .orderBy(desc(files.createdAt), desc(files.id))
      .limit(MAX_LISTED_FILES),
  )
  return { files: rows.map((r) => r.file), count: rows[0]?.count ?? 0, totalSize: rows[0]?.totalSize ?? 0 }
}

function giveBack(tx: Db, userId: string, bytes: number) {
  return tx
    .update(storageUsage)
    .set({ bytes: sql`greatest(${storageUsage.bytes} - ${bytes}, 0)`, updatedAt: sql`now()` })
    .where(eq(storageUsage.userId, userId))
}
