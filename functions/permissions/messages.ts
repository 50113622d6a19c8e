import { z } from 'zod'
import type { PermissionRequest } from '../../schema'
import type { ErrorCode } from '../../lib/http/errors'
import { ApiError } from '../../lib/http/errors'
import { isHostileText } from '../../lib/http/validation'
import { errorFields, log } from '../../lib/log'
import { type DecideOutcome, type Decision, REQUEST_ALREADY_DECIDED, REQUEST_EXPIRED, REQUEST_NOT_FOUND, SESSION_ENDED } from './decide'
import { expiresAt, type PermissionStatus } from './requests'

/**
 * The permission socket's messages (`GET /api/permissions/socket`), JSON text frames. The server sends
 * `permission_request` (a pending request: each one on connect, then each new one), `permission_decided` (a
 * request of the user was decided, from any dashboard or the HTTP API), `permission_expired` (nobody decided a
 * request in time: it is denied and leaves the pending list) and `error` (the answer to a message it could not
 * apply). The client sends `decision`.
 */
export type ServerMessage =
  | {
      type: 'permission_request'
      requestId: string
      agentId: string
      toolName: string
      toolInput: Record<string, unknown>
      reason: string
      createdAt: string
      expiresAt: string
    }
  | { type: 'permission_decided'; requestId: string; status: Exclude<PermissionStatus, 'pending'> }
  | { type: 'permission_expired'; requestId: string; expiresAt: string }
  | { type: 'error'; requestId: string | null; error: string; code: ErrorCode }

/** A client message at most, in characters: a decision is ~100. Bigger ones are answered with an error. */
export const MAX_CLIENT_MESSAGE_CHARS = 4096

export const requestMessage = (row: PermissionRequest): ServerMessage => ({
  type: 'permission_request',
  requestId: row.id,
  agentId: row.agentId,
  toolName: row.toolName,
  toolInput: row.toolInput,
  reason: row.reason,
  createdAt: row.createdAt.toISOString(),
  expiresAt: expiresAt(row).toISOString(),
})

export const expiredMessage = (row: PermissionRequest): ServerMessage => ({
  type: 'permission_expired',
  requestId: row.id,
  expiresAt: expiresAt(row).toISOString(),
})

export const decidedMessage = (row: PermissionRequest): ServerMessage => ({
  type: 'permission_decided',
  requestId: row.id,
  status: row.status as 'approved' | 'denied',
})

const ClientDecision = z.object({
  type: z.literal('decision'),
  requestId: z.string().min(1).max(100).refine((s) => !isHostileText(s)),
  decision: z.enum(['approve', 'deny']),
})

const INVALID_MESSAGE = 'Invalid message: expected {"type": "decision", "requestId", "decision": "approve" or "deny"}'

/** What a client message leads to: an answer to its sender, and a message for every socket of the user. */
export interface MessageOutcome {
  reply?: ServerMessage
  broadcast?: ServerMessage
  /** The socket's session has ended: after the reply, the socket closes (`SESSION_ENDED_CLOSE_CODE`). */
  close?: boolean
}

const refusal = (requestId: string | null, error: string, code: ErrorCode): MessageOutcome => ({ reply: { type: 'error', requestId, error, code } })

/** The `requestId` of a message that failed validation, when it has a usable one (echoed in the error). */
function requestIdOf(value: unknown): string | null {
  const id = (value as { requestId?: unknown } | null)?.requestId
  return typeof id === 'string' && id.length <= 100 && !isHostileText(id) ? id : null
}

/**
 * Applies one client message through `decide` (the same decision function as `POST /api/permissions/:id`).
 * Never throws: whatever is wrong with a message is answered to its sender only, and the socket stays open.
 */
export async function answerClientMessage(
  raw: unknown,
  decide: (requestId: string, decision: Decision) => Promise<DecideOutcome | { outcome: 'session_ended' }>,
): Promise<MessageOutcome> {
  if (typeof raw !== 'string') return refusal(null, 'Invalid message: text frames only', 'VALIDATION')
  if (raw.length > MAX_CLIENT_MESSAGE_CHARS) return refusal(null, 'Message too large', 'PAYLOAD_TOO_LARGE')
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    return refusal(null, 'Invalid JSON message', 'INVALID_JSON')
  }
  const parsed = ClientDecision.safeParse(value)
  if (!parsed.success) return refusal(requestIdOf(value), INVALID_MESSAGE, 'VALIDATION')
  const { requestId, decision } = parsed.data
  try {
    const done = await decide(requestId, decision)
    if (done.outcome === 'session_ended') return { ...refusal(requestId, SESSION_ENDED, 'UNAUTHORIZED'), close: true }
    if (done.outcome === 'not_found') return refusal(requestId, REQUEST_NOT_FOUND, 'NOT_FOUND')
    if (done.outcome === 'already_decided') return refusal(requestId, REQUEST_ALREADY_DECIDED, 'ALREADY_DECIDED')
    if (done.outcome === 'expired') return refusal(requestId, REQUEST_EXPIRED, 'PERMISSION_EXPIRED')
    log.info('permissions.decided', { requestId, status: done.request.status, via: 'socket' })
    return { broadcast: decidedMessage(done.request) }
  } catch (e) {
    // A refusal the store raised on purpose (`Database not configured`) is said as is; anything else is logged.
    if (e instanceof ApiError && (e.status < 500 || e.code === 'NOT_CONFIGURED')) return refusal(requestId, e.message, e.code)
    log.error('permissions.socket_decision_failed', { requestId, ...errorFields(e) })
    return refusal(requestId, 'Internal server error', 'INTERNAL')
  }
}
