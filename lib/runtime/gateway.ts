import type { ChatMessage, CronJob, DiagnosticCommand, DiagnosticResult, GatewaySession, HeartbeatFrequency, RuntimeGateway, SyncPayload } from './provider'
import { RuntimeProviderError } from './provider'
import { deadline } from '../deadline'
import { readCapped } from '../http/read-capped'

/**
 * The runtime's gateway API over fetch, the same for every provider. Every call carries
 * `Authorization: Bearer <gatewayToken>` and a timeout; an unreachable runtime, a non-2xx answer or a body that
 * is not the documented JSON is a `RuntimeProviderError` (502), never a crash. The runtime's side is
 * infra/runtime/ (the local runtime program), which documents the same paths:
 *
 * | Call | Method and path | Body / answer |
 * |---|---|---|
 * | sessions | `GET /api/gateway/sessions` | `{sessions: GatewaySession[]}` |
 * | cronJobs | `GET /api/gateway/cron` | `{jobs: CronJob[]}` |
 * | setHeartbeat | `PUT /api/gateway/cron/heartbeat` | `{enabled, frequency}` → `{job: CronJob}` |
 * | chat | `POST /api/gateway/chat` | `{text, sessionId?, deliveryId?}` → `{sessionId, reply}` (a repeated `deliveryId` answers the first reply again) |
 * | sync | `POST /api/gateway/sync` | `SyncPayload` → `{ok: true}` |
 * | diagnostic | `POST /api/gateway/diagnostics` | `{command}` → `{command, output, exitCode, durationMs}` |
 * | resetMemory | `POST /api/gateway/memory/reset` | → `{ok: true}` |
 */
export const GATEWAY_TIMEOUT_MS = 10_000
// The largest answer read from a runtime (diagnostic output included): the rest is never buffered.
export const MAX_ANSWER_BYTES = 2 * 1024 * 1024
// Diagnostics such as runtime.doctor may take longer than a read.
export const DIAGNOSTIC_TIMEOUT_MS = 30_000
// An agent's reply may take a model call or several: longer than a read.
export const CHAT_TIMEOUT_MS = 60_000

export function httpGateway(baseUrl: string, token: string, fetchImpl: typeof fetch = fetch, readTimeoutMs = GATEWAY_TIMEOUT_MS): RuntimeGateway {
  async function call<T>(method: string, path: string, body?: unknown, timeoutMs = readTimeoutMs): Promise<T> {
    // The whole exchange, the answer's body included, within `timeoutMs`.
    const bound = deadline(timeoutMs)
    try {
      let res: Response
      try {
        res = await fetchImpl(new URL(path, baseUrl), {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: bound.signal,
        })
      } catch {
        throw new RuntimeProviderError(bound.timedOut ? `Runtime did not answer within ${timeoutMs} ms` : 'Runtime unreachable', 502, 'runtime')
      }
      if (!res.ok) {
        await res.body?.cancel()
        throw new RuntimeProviderError(`Runtime answered ${res.status}`, 502, 'runtime')
      }
      let text: string | null
      try {
        text = await readCapped(res, MAX_ANSWER_BYTES)
      } catch {
        throw new RuntimeProviderError('Runtime answer cut off', 502, 'runtime')
      }
      if (text === null) throw new RuntimeProviderError('Runtime answer too large', 502, 'runtime')
      try {
        return JSON.parse(text) as T
      } catch {
        throw new RuntimeProviderError('Runtime answered a body that is not JSON', 502, 'runtime')
      }
    } finally {
      bound.clear()
    }
  }
  const list = <T>(value: unknown, key: string): T[] => {
    const items = (value as Record<string, unknown> | null)?.[key]
    if (!Array.isArray(items)) throw new RuntimeProviderError(`Runtime answer has no ${key} list`, 502, 'runtime')
    return items as T[]
  }
  return {
    sessions: async () => list<GatewaySession>(await call('GET', '/api/gateway/sessions'), 'sessions'),
    cronJobs: async () => list<CronJob>(await call('GET', '/api/gateway/cron'), 'jobs'),
    setHeartbeat: async (job: { enabled: boolean; frequency: HeartbeatFrequency }) =>
      (await call<{ job: CronJob }>('PUT', '/api/gateway/cron/heartbeat', job)).job,
    chat: async (message: ChatMessage) => {
      const answer = await call<{ sessionId?: unknown; reply?: unknown } | null>('POST', '/api/gateway/chat', message, CHAT_TIMEOUT_MS)
      if (typeof answer?.reply !== 'string' || typeof answer.sessionId !== 'string') throw new RuntimeProviderError('Runtime answer has no reply', 502, 'runtime')
      return { sessionId: answer.sessionId, reply: answer.reply }
    },
    sync: async (payload: SyncPayload) => void (await call('POST', '/api/gateway/sync', payload)),
    diagnostic: (command: DiagnosticCommand) => call<DiagnosticResult>('POST', '/api/gateway/diagnostics', { command }, DIAGNOSTIC_TIMEOUT_MS),
    resetMemory: async () => void (await call('POST', '/api/gateway/memory/reset')),
  }
}
