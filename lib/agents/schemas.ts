import { z } from '@hono/zod-openapi'
import { PLAN_NAMES } from '../billing/plans'

/** Bounds of an agent's `config`: a JSON object of at most 100 top-level keys and 16 KB serialised. */
export const CONFIG_MAX_KEYS = 100
export const CONFIG_MAX_BYTES = 16 * 1024
/** The most agents any list answers (network is unlimited; past this, the oldest are listed first). */
export const MAX_LISTED_AGENTS = 500

const iso = () => z.string().max(64).nullable().openapi({ format: 'date-time' })

/** An agent's configuration: any JSON object within the bounds (memories live under `memories`, see sync). */
export const AgentConfigSchema = z
  .record(z.string().max(100), z.unknown())
  .refine((o) => Object.keys(o).length <= CONFIG_MAX_KEYS, `config may have at most ${CONFIG_MAX_KEYS} keys`)
  .refine((o) => new TextEncoder().encode(JSON.stringify(o)).length <= CONFIG_MAX_BYTES, `config must be at most ${CONFIG_MAX_BYTES} bytes as JSON`)
  .openapi('AgentConfig', {
    type: 'object',
    maxProperties: CONFIG_MAX_KEYS,
    description: `A JSON object: at most ${CONFIG_MAX_KEYS} keys and ${CONFIG_MAX_BYTES} bytes serialised. \`memories\` (an object of strings, or a list of \`{key, value}\`) is what sync pushes as memories.`,
  })

export const AgentSchema = z
  .object({
    id: z.string().max(255),
    name: z.string().max(100),
    plan: z.string().max(32).nullable().openapi({ description: 'The plan the agent runs under (solo, collective, label, network)' }),
    aiProvider: z.string().max(64).nullable(),
    config: AgentConfigSchema,
    status: z.string().max(32).openapi({ description: '`provisioning`, `starting`, `running`, `stopped`, `error` or `template`' }),
    statusReason: z.string().max(1000).nullable(),
    verification: z.enum(['unverified', 'human_verified']),
    runtimeServiceId: z.string().max(255).nullable().openapi({ description: "The runtime provider's service id, used first by every lifecycle call" }),
    url: z.string().max(2048).nullable().openapi({ description: "The runtime's base URL" }),
    provisionedAt: iso(),
    startedAt: iso(),
    lastSeenAt: iso(),
    createdAt: z.string().max(64).openapi({ format: 'date-time' }),
    updatedAt: z.string().max(64).openapi({ format: 'date-time' }),
  })
  .openapi('Agent', { description: 'An agent. Its gateway token is never part of it (owner only: `GET /api/agents/{id}/token`).' })

export const AgentListSchema = z.object({ agents: z.array(AgentSchema).max(MAX_LISTED_AGENTS) }).openapi('AgentList')

export const AgentIdParams = z.object({
  id: z.string().max(255).openapi({ param: { name: 'id', in: 'path' }, description: 'The agent id' }),
})

export const AgentNameField = z.string().trim().min(1, 'name must not be empty').max(100, 'name must be at most 100 characters')
export const AiProviderField = z.string().trim().min(1).max(64).openapi({ example: 'anthropic' })
export const PlanField = z.enum(PLAN_NAMES, { error: `plan must be one of ${PLAN_NAMES.join(', ')}` })

export const NOT_FOUND = 'No such agent, or not the caller’s (`NOT_FOUND`): the same answer either way'
export const PROVIDER_DOWN = 'The runtime provider or the runtime failed the call (`RUNTIME_UNAVAILABLE`)'
