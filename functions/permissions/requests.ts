import { and, desc, eq, gt, lte, sql } from 'drizzle-orm'
import { agents, type PermissionRequest, permissionRequests, users } from '../../schema'
import type { Reader } from '../../lib/db/rls'

/**
 * A request's state as the owner's API shows it: `pending` until its owner decides it once. Stored, a request may
 * also be `expired` (nobody decided it within `PERMISSION_TTL_MS`): a denial, which the hook's poll reads as
 * `denied` and which never shows in the owner's list.
 */
export type PermissionStatus = 'pending' | 'approved' | 'denied'
export type StoredPermissionStatus = PermissionStatus | 'expired'

/** A request not decided within this long of its creation expires: a denial (0-decisions "open loops"). */
export const PERMISSION_TTL_MS = 10 * 60_000

/** Where the queue delivers each request's expiry, `PERMISSION_TTL_MS` after its creation (`POST`, signed). */
export const PERMISSION_EXPIRY_PATH = '/api/queue/permission-expiry'

/** When `row` expires unless decided before. */
export const expiresAt = (row: Pick<PermissionRequest, 'createdAt'>) => new Date(row.createdAt.getTime() + PERMISSION_TTL_MS)

/**
 * The request's state at `now` (the injected clock): a `pending` one past its expiry is `expired` whether or not
 * the expiry job has marked it yet, so every reader (the poll, the list, a decision) agrees at once.
 */
export function statusAt(row: Pick<PermissionRequest, 'status' | 'createdAt'>, now: Date): StoredPermissionStatus {
  if (row.status === 'pending' && expiresAt(row) <= now) return 'expired'
  return row.status as StoredPermissionStatus
}

/** The oldest `created_at` a request can have and still be decided at `now`. */
export const liveSince = (now: Date) => new Date(now.getTime() - PERMISSION_TTL_MS)

/** Pending requests a list (and a dashboard connecting) gets at most, newest first. */
export const MAX_LISTED_REQUESTS = 100

/**
 * The stored `toolInput` at most: its JSON, in characters. A bigger input is still classified whole; what is
 * kept (and shown on the dashboard) is `{truncated: true, size, preview}`, `preview` being the JSON's start.
 */
export const MAX_STORED_TOOL_INPUT_CHARS = 16_384

/** A permission request as the API shows it (the list, a decision's answer). */
export interface PermissionRequestJson {
  requestId: string
  agentId: string
  toolName: string
  toolInput: Record<string, unknown>
  reason: string
  status: PermissionStatus
  createdAt: string
  expiresAt: string
  decidedAt: string | null
}

/** For the list (pending ones) and a decision's answer (the one just decided): never an expired request. */
export const requestJson = (row: PermissionRequest): PermissionRequestJson => ({
  requestId: row.id,
  agentId: row.agentId,
  toolName: row.toolName,
  toolInput: row.toolInput,
  reason: row.reason,
  status: row.status as PermissionStatus,
  createdAt: row.createdAt.toISOString(),
  expiresAt: expiresAt(row).toISOString(),
  decidedAt: row.decidedAt?.toISOString() ?? null,
})

/** `toolInput` as stored: itself, or its capped preview (cut on a code point, never inside a surrogate pair). */
export function storedToolInput(toolInput: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(toolInput)
  if (json.length <= MAX_STORED_TOOL_INPUT_CHARS) return toolInput
  let preview = json.slice(0, MAX_STORED_TOOL_INPUT_CHARS)
  if (/[\uD800-\uDBFF]$/.test(preview)) preview = preview.slice(0, -1)
  return { truncated: true, size: json.length, preview }
}

export interface NewPermissionRequest {
  agentId: string
  userId: string
  toolName: string
  toolInput: Record<string, unknown>
  reason: string
}

/**
 * Records a dangerous call, in one statement, for its owner: the owner of the agent `agentId` names, else
 * `userId` when it names a user, else nobody (`userId` null: no one can approve it, so the call stays denied).
 * A known agent's owner wins over the `userId` the runtime claims: another user must never see the agent's
 * tool input, nor decide what it may do.
 */
export async function createPermissionRequest(reader: Reader, input: NewPermissionRequest, now = new Date()): Promise<PermissionRequest> {
  const owner = sql`coalesce(
    (select ${agents.userId} from ${agents} where ${agents.id} = ${input.agentId}),
    (select ${users.id} from ${users} where ${users.id} = ${input.userId})
  )`
  const [row] = await reader.asService('permissionHook', (db) =>
    db
      .insert(permissionRequests)
      // Created at the server's clock (ms), the one the expiry is judged by: the database's own `now()` has
      // microseconds a JS date cannot hold, so the deadline would differ by a fraction between SQL and the poll.
      .values({ userId: owner, agentId: input.agentId, toolName: input.toolName, toolInput: storedToolInput(input.toolInput), reason: input.reason, createdAt: now })
      .returning(),
  )
  return row
}

/** One request by id, whoever owns it: the hook's poll. */
export async function findRequestForHook(reader: Reader, requestId: string): Promise<PermissionRequest | undefined> {
  const [row] = await reader.asService('permissionHook', (db) => db.select().from(permissionRequests).where(eq(permissionRequests.id, requestId)).limit(1))
  return row
}

/**
 * The user's pending requests that have not expired at `now`, newest first, at most `MAX_LISTED_REQUESTS` (row
 * isolation keeps them the user's).
 */
export const pendingRequests = (reader: Reader, userId: string, now = new Date()): Promise<PermissionRequest[]> =>
  reader.asUser(userId, (db) =>
    db
      .select()
      .from(permissionRequests)
      .where(and(eq(permissionRequests.userId, userId), eq(permissionRequests.status, 'pending'), gt(permissionRequests.createdAt, liveSince(now))))
      .orderBy(desc(permissionRequests.createdAt), desc(permissionRequests.id))
      .limit(MAX_LISTED_REQUESTS),
  )

/**
 * Marks `requestId` `expired` when it is still `pending` and past its expiry at `now`: one conditional UPDATE, so
 * of every delivery of its expiry job (and any race with a decision) exactly one changes it, and only that one
 * tells the dashboards. Answers the row it expired, else the row as it is (decided, already expired, not yet
 * due), or undefined when it is gone.
 */
export async function expireRequest(reader: Reader, requestId: string, now = new Date()): Promise<{ expired?: PermissionRequest; row?: PermissionRequest }> {
  const [expired] = await reader.asService('permissionExpiry', (db) =>
    db
      .update(permissionRequests)
      .set({ status: 'expired' })
      .where(and(eq(permissionRequests.id, requestId), eq(permissionRequests.status, 'pending'), lte(permissionRequests.createdAt, liveSince(now))))
      .returning(),
  )
  if (expired) return { expired, row: expired }
  const [row] = await reader.asService('permissionExpiry', (db) => db.select().from(permissionRequests).where(eq(permissionRequests.id, requestId)).limit(1))
  return { row }
}
