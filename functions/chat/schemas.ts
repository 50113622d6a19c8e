import { z } from '@hono/zod-openapi'
import { JOB_STATUSES } from './jobs'
import { LISTED_CRON_JOBS, LISTED_SESSIONS } from './status'
import { LONG_MESSAGE_CHARS } from './workload'
import { countField } from '../../lib/http/fields'
import { MAX_CHAT_TEXT } from '../../lib/runtime/provider'

const iso = (description?: string) => z.string().max(64).openapi({ format: 'date-time', ...(description ? { description } : {}) })
const id = (description: string) => z.string().max(255).openapi({ description })

export const ChatBody = z
  .object(
    {
      message: z
        .string({ error: 'Message required' })
        .trim()
        .min(1, 'Message required')
        .max(MAX_CHAT_TEXT, `Message must be at most ${MAX_CHAT_TEXT} characters`)
        .openapi({
          description: `The text for the agent, trimmed: 1 to ${MAX_CHAT_TEXT} characters. Over ${LONG_MESSAGE_CHARS} characters it weighs 2 workload slots, else 1.`,
        }),
    },
    { error: 'Message required' },
  )
  .openapi('ChatMessage')

export const ChatQueuedSchema = z
  .object({
    success: z.literal(true),
    queued: z.literal(true),
    jobId: id('Poll it at `GET /api/jobs/{jobId}`'),
    status: z.literal('queued'),
    agentId: id('The agent the message goes to'),
    agentName: z.string().max(255),
  })
  .openapi('ChatQueued')

export const JobParams = z.object({
  jobId: z.string().max(255).openapi({ param: { name: 'jobId', in: 'path' }, description: 'The id `POST /api/gateway/chat` answered' }),
})

const ChatResultSchema = z
  .object({
    sessionId: z.string().max(255).nullable().openapi({ description: 'The runtime session the message went to; null when the claimer that completed the job named none' }),
    reply: z.string().max(2_000_000).openapi({ description: 'The agent’s answer' }),
  })
  .openapi('ChatResult')

export const JobSchema = z
  .object({
    jobId: id('The job id'),
    status: z.enum(JOB_STATUSES).openapi({
      description:
        '`queued` (waiting for a delivery or a claim, after a failed delivery that will be retried, or after a claim’s lease ran out), ' +
        '`running` (being delivered, or claimed under a live lease), `succeeded` or `failed` (final)',
    }),
    attempts: countField().openapi({ description: 'Deliveries to the runtime so far (at most 4); claims do not count' }),
    result: ChatResultSchema.nullable().openapi({ description: 'The answer once `succeeded` (the runtime’s, or the claimer’s `complete`), else null' }),
    error: z
      .string()
      .max(2048)
      .nullable()
      .openapi({ description: 'Why the last delivery failed (kept while a retry is pending), or the claimer’s `fail` reason; null after success' }),
    claimedByAgentId: id('The agent holding the job’s live lease, or the one that completed or failed it; null when unclaimed or its lease ran out').nullable(),
    leaseExpiresAt: iso('While a claim’s lease is live: when it runs out and the job returns to the queue; else null').nullable(),
    createdAt: iso(),
    updatedAt: iso(),
  })
  .openapi('ChatJob')

const leaseIdField = z
  .string({ error: 'leaseId required' })
  .min(1, 'leaseId required')
  .max(255, 'leaseId must be at most 255 characters')
  .openapi({ description: 'The `leaseId` the claim answered' })

export const ClaimBody = z
  .object(
    { claimerAgentId: z.string({ error: 'claimerAgentId required' }).min(1, 'claimerAgentId required').max(255, 'Agent not found').openapi({ description: 'One of the caller’s agents' }) },
    { error: 'claimerAgentId required' },
  )
  .openapi('ClaimJob')

export const ClaimedJobSchema = JobSchema.extend({
  claimedByAgentId: id('The agent that claimed the job'),
  claimedAt: iso(),
  leaseId: id('Identifies this claim’s lease: send it to `complete` or `fail`. Only the current lease’s holder may end the job'),
  leaseExpiresAt: iso('When the lease runs out: until then the job is the claimer’s; after it, the job is back in the queue and a stale `leaseId` is refused'),
}).openapi('ClaimedChatJob')

/** The most a claimer's reply may hold, in characters (a runtime's reply is kept up to the same). */
export const MAX_CLAIMED_REPLY = 500_000

export const CompleteJobBody = z
  .object(
    {
      leaseId: leaseIdField,
      result: z
        .object(
          {
            reply: z.string({ error: 'result.reply required' }).max(MAX_CLAIMED_REPLY, `result.reply must be at most ${MAX_CLAIMED_REPLY} characters`).openapi({ description: 'The agent’s answer' }),
            sessionId: z.string().min(1).max(255).optional().openapi({ description: 'The session it answered in, if any' }),
          },
          { error: 'result required' },
        )
        .openapi({ description: 'Stored as the job’s `result`' }),
    },
    { error: 'leaseId required' },
  )
  .openapi('CompleteChatJob')

export const FailJobBody = z
  .object(
    {
      leaseId: leaseIdField,
      reason: z
        .string({ error: 'reason required' })
        .trim()
        .min(1, 'reason required')
        .max(2048, 'reason must be at most 2048 characters')
        .openapi({ description: 'Why the job failed: stored as the job’s `error`' }),
    },
    { error: 'leaseId required' },
  )
  .openapi('FailChatJob')

export const ChatDeliverySchema = z.object({ jobId: z.string().min(1).max(255) }).openapi('ChatDelivery', { description: 'What `POST /api/gateway/chat` publishes' })

export const ChatDeliveryResultSchema = z
  .object({
    ok: z.literal(true),
    jobId: id('The job delivered'),
    status: z.enum(JOB_STATUSES).nullable().openapi({ description: 'The job’s status afterwards; null when it no longer exists' }),
    delivered: z.boolean().openapi({ description: 'Whether this delivery called the runtime (false: gone, finished or claimed; nothing changed)' }),
  })
  .openapi('ChatDeliveryResult')

export const GatewayStatusSchema = z
  .object({
    health: z.enum(['healthy', 'unreachable']),
    healthDetail: z
      .union([
        z.object({ ok: z.literal(true), status: z.number().int().min(100).max(599).openapi({ format: 'int32', description: 'HTTP status of the gateway’s answer' }) }),
        z.object({ ok: z.literal(false), error: z.string().max(1024).openapi({ description: 'Why the gateway did not answer' }) }),
      ])
      .openapi({ description: '`{ok: true, status}` when the gateway answered, `{ok: false, error}` when not' }),
    sessions: z.object({
      total: countField(),
      active: countField().openapi({ description: 'Sessions with a message in the last hour' }),
      list: z
        .array(
          z.object({
            id: z.string().max(255),
            channel: z.string().max(64).openapi({ description: '`webchat`, `telegram`, `discord`, `whatsapp`' }),
            lastActive: iso().nullable(),
            messages: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64' }),
          }),
        )
        .max(LISTED_SESSIONS)
        .openapi({ description: `The ${LISTED_SESSIONS} most recently active` }),
    }),
    cron: z.object({
      total: countField(),
      enabled: countField(),
      jobs: z
        .array(
          z.object({
            id: z.string().max(255),
            name: z.string().max(255),
            enabled: z.boolean(),
            schedule: z.string().max(64).openapi({ description: 'How often it runs: `30m`, `1h`, `2h`, `3h`, `6h`, `12h`' }),
            lastRun: iso().nullable(),
            nextRun: iso().nullable(),
          }),
        )
        .max(LISTED_CRON_JOBS),
    }),
  })
  .openapi('GatewayStatus')
