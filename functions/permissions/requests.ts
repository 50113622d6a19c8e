import { and, desc, eq, sql } from 'drizzle-orm'
import { agents, type PermissionRequest, permissionRequests, users } from '../../schema'
import type { Reader } from '../../lib/db/rls'

/** A request's state: `pending` until its owner decides it once. */
export type PermissionStatus = 'pending' | 'approved' | 'denied'

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
  decidedAt: string | null
}

export const requestJson = (row: PermissionRequest): PermissionRequestJson => ({
  requestId: row.id,
  agentId: row.agentId,
  toolName: row.toolName,
  toolInput: row.toolInput,
  reason: row.reason,
  status: row.status as PermissionStatus,
  createdAt: row.createdAt.toISOString(),
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
export async function createPermissionRequest(reader: Reader, input: NewPermissionRequest): Promise<PermissionRequest> {
  const owner = sql`coalesce(
    (select ${agents.userId} from ${agents} where ${agents.id} = ${input.agentId}),
    (select ${users.id} from ${users} where ${users.id} = ${input.userId})
  )`
  const [row] = await reader.asService('permissionHook', (db) =>
    db
      .insert(permissionRequests)
      .values({ userId: owner, agentId: input.agentId, toolName: input.toolName, toolInput: storedToolInput(input.toolInput), reason: input.reason })
      .returning(),
  )
  return row
}

/** One request by id, whoever owns it: the hook's poll. */
export async function findRequestForHook(reader: Reader, requestId: string): Promise<PermissionRequest | undefined> {
  const [row] = await reader.asService('permissionHook', (db) => db.select().from(permissionRequests).where(eq(permissionRequests.id, requestId)).limit(1))
  return row
}

/** The user's pending requests, newest first, at most `MAX_LISTED_REQUESTS` (row isolation keeps them the user's). */
export const pendingRequests = (reader: Reader, userId: string): Promise<PermissionRequest[]> =>
  reader.asUser(userId, (db) =>
    db
      .select()
      .from(permissionRequests)
      .where(and(eq(permissionRequests.userId, userId), eq(permissionRequests.status, 'pending')))
      .orderBy(desc(permissionRequests.createdAt), desc(permissionRequests.id))
      .limit(MAX_LISTED_REQUESTS),
  )
