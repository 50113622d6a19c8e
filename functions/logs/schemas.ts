import { z } from '@hono/zod-openapi'
import { LOG_BUFFER_LINES, LOG_TAIL_GRACE_MS } from '../../lib/logs/tail'

/** Agents `GET /api/logs/active` looks at: the caller's first this many (more than any plan but network allows). */
export const MAX_ACTIVE_AGENTS = 100

export const AgentIdParams = z.object({
  agentId: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'agentId', in: 'path' }, description: 'One of the caller’s agents' }),
})

export const LogStreamSchema = z.string().max(10_000_000).openapi({
  description:
    'A `text/event-stream`: `event: connected`, then the buffered lines and every new one as `event: line`, and ' +
    '`event: exit` before the stream closes. Each `data:` is JSON `{type, agentId, text, code}`: `type` the event, ' +
    '`text` the log line (`line`) or what happened (`connected`, `exit`), `code` for `exit` only (0 stopped, grace ' +
    'over or the runtime’s log stream ended; 1 reading it failed), else null.',
  example: 'event: connected\ndata: {"type":"connected","agentId":"a1","text":"Connected to the log stream","code":null}\n\n',
})

const BufferedLineSchema = z
  .object({
    timestamp: z.string().max(64).openapi({ description: 'ISO 8601, as the runtime reported it' }),
    stream: z.enum(['stdout', 'stderr']),
    text: z.string().max(65_536),
  })
  .openapi('LogLine')

export const LogHistorySchema = z
  .object({
    agentId: z.string().max(100),
    active: z.boolean().openapi({ description: 'A tail is running for the agent' }),
    lines: z.array(BufferedLineSchema).max(LOG_BUFFER_LINES).openapi({ description: `The running tail’s buffer, oldest first (at most ${LOG_BUFFER_LINES} lines); empty without a tail` }),
  })
  .openapi('LogHistory')

export const LogStopSchema = z
  .object({
    agentId: z.string().max(100),
    stopped: z.boolean().openapi({ description: 'A running tail was ended (its clients got `exit`); false when none ran' }),
  })
  .openapi('LogTailStopped')

export const ActiveTailsSchema = z
  .object({
    tails: z
      .array(
        z.object({
          agentId: z.string().max(100),
          clients: z.number().int().min(0).max(100_000).openapi({ format: 'int32' }),
          bufferedLines: z.number().int().min(0).max(LOG_BUFFER_LINES).openapi({ format: 'int32' }),
          startedAt: z.string().max(64).openapi({ description: 'ISO 8601' }),
        }),
      )
      .max(MAX_ACTIVE_AGENTS),
  })
  .openapi('ActiveLogTails', {
    description: `The caller’s agents with a running tail (one ends ${LOG_TAIL_GRACE_MS / 1000} s after its last client leaves).`,
  })
