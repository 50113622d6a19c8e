import { and, desc, eq, inArray, isNotNull, isNull, lt, ne, or, sql } from 'drizzle-orm'
import type { Db } from '../db/rls'
import { type Reader, withUser } from '../db/rls'
import { agents, files, storageUsage } from '../../schema'

/**
 * The `files` records and the `storage_usage` row, always as their user (row isolation): the invariant kept here is
 * that `storage_usage.bytes` is the sum of the `size` of the user's records, pending and deleting ones included (a
 * pending record's size is the bytes reserved for it). Every change to one moves the other in the same transaction,
 * and bytes are given back only by deleting a record, so they are given back exactly once; `startUpload` recounts.
 *
 * A record's `status`: `pending` while its object is written, `stored` once complete (the only status listed or
 * served), `deleting` once a delete has begun (hidden, still counted). A record whose object may exist is deleted
 * only after its object is: `deleting` records are removed by `finishDeleting`, which callers run once storage has
 * deleted their objects (functions/files/objects.ts `purgeDeleting`). So a recount never frees the bytes of an object
 * that still exists, and an object whose delete failed stays counted until a retry removes it.
 *
 * A record outlives its agent only as `deleting` (`agentId` null): an agent's delete marks every record of the agent
 * in the transaction that deletes its row (lib/agents/lifecycle.ts), and the files family deletes their objects from
 * the queue (`FILES_PURGE_PATH`). A record left without an agent any other way (a direct database delete) is never
 * listed, served or made `stored`, and the next upload marks it `deleting`.
 */
export type FileRow = typeof files.$inferSelect
/** A record as it is listed and served: `stored`, with its agent. */
export type StoredFile = FileRow & { agentId: string }

/** A record on its way out: its object is deleted first, then the record (and its bytes). */
export interface DeletingRecord {
  id: string
  storageKey: string
}

/** A pending record older than this is an upload that died with its process: the next upload sweeps it. */
export const STALE_PENDING_MS = 24 * 60 * 60 * 1000
/** `deleting` records an upload finishes before it checks the quota: a backlog is worked off a slice at a time. */
export const MAX_FINISHED_PER_UPLOAD = 100
/** Newest files a list answers with (`count` and `totalSize` still cover them all). */
export const MAX_LISTED_FILES = 1000

export interface UploadStart {
  /** Bytes the user's records hold now, pending and deleting included. */
  usedBytes: number
  /** The user's `deleting` records (stale pending ones just marked included; at most `MAX_FINISHED_PER_UPLOAD`): delete their objects, then them. */
  deleting: DeletingRecord[]
}

/**
 * The user's usage, in one transaction: stale pending records, and records whose agent is gone, are marked
 * `deleting` (their objects may exist: they are deleted first, by the caller), then the usage row is recounted from
 * the records. The recount heals what the invariant cannot see: records removed by a cascade (a direct database
 * delete of a user) and stale reservations; it never frees a record's bytes, only those of records already gone.
 * It is safe beside concurrent uploads because it first locks the usage row, which every writer takes in the
 * transaction that changes the records: once it holds the lock, the records it sums (read by the next statement)
 * include every reservation made before it, and none is made during it.
 */
export function startUpload(db: Db, userId: string, now = Date.now()): Promise<UploadStart> {
  return withUser(db, userId, async (tx) => {
    await tx
      .update(files)
      .set({ status: 'deleting' })
      .where(
        and(
          eq(files.userId, userId),
          or(
            and(eq(files.status, 'pending'), lt(files.createdAt, new Date(now - STALE_PENDING_MS))),
            and(isNull(files.agentId), ne(files.status, 'deleting')),
          ),
        ),
      )
    const deleting = await selectDeleting(tx, userId)
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
    return { usedBytes, deleting }
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
 * pending record is gone or marked (swept as stale, or its agent deleted) or without its agent: the caller removes
 * the object.
 *
 * `bindAgent`: a file sent before its `agentId` was written with a pending record of no agent; it becomes that
 * agent's here. The agent's row is locked first (as a delete locks it): an agent deleted meanwhile (or not the user's)
 * gives null, and one being deleted waits for this record, which its delete then marks like the others.
 */
export function markStored(db: Db, userId: string, fileId: string, size: number, bindAgent?: string): Promise<StoredFile | null> {
  return withUser(db, userId, async (tx) => {
    if (bindAgent) {
      const [agent] = await tx.select({ id: agents.id }).from(agents).where(and(eq(agents.id, bindAgent), eq(agents.userId, userId))).for('share')
      if (!agent) return null
    }
    const [pending] = await tx
      .delete(files)
      .where(and(eq(files.id, fileId), eq(files.status, 'pending'), bindAgent ? isNull(files.agentId) : isNotNull(files.agentId)))
      .returning()
    if (!pending) return null
    const [stored] = await tx
      .insert(files)
      .values({ ...pending, ...(bindAgent ? { agentId: bindAgent } : {}), size, status: 'stored', createdAt: sql`now()` })
      .returning()
    if (pending.size > size) await giveBack(tx, userId, pending.size - size)
    return withAgent(stored)
  })
}

/** A failed upload: its pending record goes, and its reserved bytes with it. */
export function releasePending(db: Db, userId: string, fileId: string): Promise<void> {
  return withUser(db, userId, async (tx) => {
    const [gone] = await tx.delete(files).where(and(eq(files.id, fileId), eq(files.status, 'pending'))).returning({ size: files.size })
    if (gone) await giveBack(tx, userId, gone.size)
  })
}

/**
 * Deletes one of the user's stored records whose object storage no longer has (a download found it missing) and
 * gives its bytes back; false when there is no such record.
 */
export function removeStored(db: Db, userId: string, fileId: string): Promise<boolean> {
  return withUser(db, userId, async (tx) => {
    const [gone] = await tx
      .delete(files)
      .where(and(eq(files.id, fileId), eq(files.userId, userId), eq(files.status, 'stored')))
      .returning({ size: files.size })
    if (!gone) return false
    await giveBack(tx, userId, gone.size)
    return true
  })
}

/**
 * The first step of a delete: one of the user's files, stored (or already `deleting`: a delete tried again), becomes
 * `deleting`: no longer listed or served, still counted. Null when the user has no such file.
 */
export async function markFileDeleting(db: Db, userId: string, fileId: string): Promise<DeletingRecord | null> {
  const [row] = await withUser(db, userId, (tx) =>
    tx
      .update(files)
      .set({ status: 'deleting' })
      .where(and(eq(files.id, fileId), eq(files.userId, userId), inArray(files.status, ['stored', 'deleting'])))
      .returning({ id: files.id, storageKey: files.storageKey }),
  )
  return row ?? null
}

/**
 * Every record of one of the user's agents becomes `deleting`, whatever its status (a pending upload's included:
 * its `markStored` then fails, and the upload deletes what it wrote). Run inside the caller's `withUser` transaction
 * (`tx`) that deletes the agent's row, after locking it: no record can be added for the agent in between, so none
 * outlives it except as `deleting`. The number of records marked.
 */
export async function markAgentFilesDeleting(tx: Db, userId: string, agentId: string): Promise<number> {
  const marked = await tx
    .update(files)
    .set({ status: 'deleting' })
    .where(and(eq(files.userId, userId), eq(files.agentId, agentId)))
    .returning({ id: files.id })
  return marked.length
}

/** The user's `deleting` records, at most `MAX_FINISHED_PER_UPLOAD`: their objects are deleted, then they go (`finishDeleting`). */
export function deletingRecords(db: Db, userId: string): Promise<DeletingRecord[]> {
  return withUser(db, userId, (tx) => selectDeleting(tx, userId))
}

const selectDeleting = (tx: Db, userId: string) =>
  tx
    .select({ id: files.id, storageKey: files.storageKey })
    .from(files)
    .where(and(eq(files.userId, userId), eq(files.status, 'deleting')))
    .limit(MAX_FINISHED_PER_UPLOAD)

/**
 * The last step of a delete, once storage has deleted the objects of `ids`: their `deleting` records go, and their
 * bytes with them, in one transaction. Each record is given back once (a concurrent finish of the same one finds
 * it gone). The bytes given back.
 */
export function finishDeleting(db: Db, userId: string, ids: string[]): Promise<number> {
  if (!ids.length) return Promise.resolve(0)
  return withUser(db, userId, async (tx) => {
    const gone = await tx
      .delete(files)
      .where(and(eq(files.userId, userId), inArray(files.id, ids), eq(files.status, 'deleting')))
      .returning({ size: files.size })
    const bytes = gone.reduce((n, r) => n + r.size, 0)
    if (bytes > 0) await giveBack(tx, userId, bytes)
    return bytes
  })
}

/**
 * An upload that will not be recorded, after its object was written: its pending record becomes `deleting` (the
 * object is deleted first, then the record and its bytes). Null when the record is no longer pending (already
 * marked by an agent's delete, or gone).
 */
export async function markPendingDeleting(db: Db, userId: string, fileId: string): Promise<DeletingRecord | null> {
  const [row] = await withUser(db, userId, (tx) =>
    tx
      .update(files)
      .set({ status: 'deleting' })
      .where(and(eq(files.id, fileId), eq(files.userId, userId), eq(files.status, 'pending')))
      .returning({ id: files.id, storageKey: files.storageKey }),
  )
  return row ?? null
}

/** What is listed and served: `stored` records that have their agent. */
const served = and(eq(files.status, 'stored'), isNotNull(files.agentId))

/** A record read under `served`. */
function withAgent(f: FileRow): StoredFile {
  if (f.agentId === null) throw new Error(`files: record ${f.id} has no agent`)
  return { ...f, agentId: f.agentId }
}

/** One of the user's stored records (another user's reads as absent). */
export async function findStored(reader: Reader, userId: string, fileId: string): Promise<StoredFile | null> {
  const rows = await reader.asUser(userId, (db) => db.select().from(files).where(and(eq(files.id, fileId), eq(files.userId, userId), served)).limit(1))
  return rows[0] ? withAgent(rows[0]) : null
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
      .where(and(eq(files.userId, userId), served, agentId === undefined ? undefined : eq(files.agentId, agentId)))
      .orderBy(desc(files.createdAt), desc(files.id))
      .limit(MAX_LISTED_FILES),
  )
  return { files: rows.map((r) => withAgent(r.file)), count: rows[0]?.count ?? 0, totalSize: rows[0]?.totalSize ?? 0 }
}

function giveBack(tx: Db, userId: string, bytes: number) {
  return tx
    .update(storageUsage)
    .set({ bytes: sql`greatest(${storageUsage.bytes} - ${bytes}, 0)`, updatedAt: sql`now()` })
    .where(eq(storageUsage.userId, userId))
}
