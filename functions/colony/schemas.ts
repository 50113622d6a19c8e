import { z } from '@hono/zod-openapi'

export const ColonyQuery = z.object({
  action: z.enum(['tree', 'soul', 'diagnostics']).default('tree').openapi({ description: '`tree` (default), `soul` or `diagnostics`' }),
})

const any = (description: string) => z.unknown().openapi({ description })
const fitness = z.number().min(0).max(100)

const EndpointSchema = z.object({ slug: z.string().max(200), description: z.string().max(1000), price: z.string().max(64) })

export const ColonyAgentSchema = z
  .object({
    id: z.string().max(200).openapi({ description: 'The soul host’s id; `borg-root` when it sent none' }),
    name: z.string().max(200),
    generation: z.number().int().min(1).max(2).openapi({ format: 'int32', description: '1 root, 2 child' }),
    fitness,
    specialization: z.string().max(200).nullable(),
    children: z.array(z.string().max(200)).max(1000),
    parent: z.string().max(200).nullable().openapi({ description: 'The parent’s wallet, or null' }),
    walletAddress: z.string().max(100).nullable(),
    status: z.enum(['active', 'stale', 'culling']),
    createdAt: z.string().max(64).nullable(),
    url: z.string().max(2000).nullable(),
    endpoints: z.array(EndpointSchema).max(100),
    uptime: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64', description: 'Seconds' }),
    version: z.string().max(64).nullable(),
  })
  .openapi('ColonyAgent')

const Degraded = {
  degraded: z.literal(true).optional().openapi({ description: 'Present when the primary soul host did not serve the answer: a fallback host did, or none did (then the values are the documented fallbacks)' }),
  error: z.string().max(200).optional(),
  detail: z.string().max(2000).optional().openapi({ description: 'Which hosts failed, and how (origins only)' }),
}

export const ColonyTreeSchema = z
  .object({
    colony_size: z.number().int().min(0).max(5000).openapi({ format: 'int32' }),
    avg_fitness: fitness.openapi({ description: 'Mean fitness to one decimal; 0 when the colony is empty' }),
    fittest: ColonyAgentSchema.nullable(),
    cull_queue: z.array(ColonyAgentSchema).max(5000).openapi({ description: 'Agents with fitness below 40' }),
    agents: z.array(ColonyAgentSchema).max(5000).openapi({ description: 'Every agent but `template` ones' }),
    root: z.object({
      address: z.string().max(100).openapi({ description: 'The zero address when unknown' }),
      designation: z.string().max(200).nullable(),
      fitness: z.object({ total: fitness, prediction: fitness, execution: fitness }),
      wallet_balance: z.object({ formatted: z.string().max(64), token: z.string().max(32) }).openapi({ description: '`{formatted: "0.00", token: "USDC.e"}` when unknown' }),
      clone_available: z.boolean(),
      clone_price: z.string().max(64).nullable(),
      soul: z.object({
        active: z.boolean(),
        dormant: z.boolean(),
        total_cycles: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64' }),
        mode: z.string().max(64).nullable(),
        active_plan: any('As the soul host sent it'),
        free_energy: z.number().nullable(),
        brain: any('As the soul host sent it'),
        transformer: any('As the soul host sent it'),
      }),
      colony: z.object({
        rank: z.number().nullable(),
        can_spawn: z.boolean(),
        should_cull: z.boolean(),
        niche: z.string().max(200).nullable(),
        colony_size: z.number().int().min(0).max(5000).openapi({ format: 'int32' }),
        fitness_rank: z.array(z.object({ id: z.string().max(200), fitness })).max(5000).openapi({ description: 'Agents by fitness, highest first' }),
      }),
    }),
    ...Degraded,
  })
  .openapi('ColonyTree')

export const SoulStateSchema = z
  .record(z.string().max(64), z.unknown())
  .openapi('SoulState', {
    description:
      'The full cognitive state: exactly the keys `active`, `dormant`, `total_cycles`, `last_think_at`, `mode`, `tools_enabled`, ' +
      '`coding_enabled`, `cycle_health`, `active_plan`, `fitness` (`total`, `trend`, `coordination`, `economic`, `evolution`, ' +
      '`execution`, `introspection`, `prediction`, `measured_at`), `beliefs`, `goals`, `recent_thoughts`, `brain`, `transformer`, ' +
      '`benchmark`, `capability_profile`, `role`, `acceleration`, `cortex`, `genesis`, `hivemind`, `synthesis`, `evaluation`, ' +
      '`free_energy`, `lifecycle`, each null when the soul host did not send it; plus `degraded`, `error`, `detail` as for `tree`.',
  })

export const ColonyDiagnosticsSchema = z
  .object({
    configured: z.boolean().openapi({ description: 'SOUL_SERVICE_URL is set' }),
    hosts: z
      .array(
        z.object({
          host: z.string().max(300).openapi({ description: 'Origin only' }),
          role: z.enum(['primary', 'fallback']),
          ok: z.boolean(),
          detail: z.string().max(100).openapi({ description: '`HTTP <status>`, `timeout`, `unreachable`, `malformed` or `too large`' }),
          latencyMs: z.number().int().min(0).max(600_000).openapi({ format: 'int32' }),
        }),
      )
      .max(20),
    timestamp: z.string().max(64).openapi({ format: 'date-time' }),
  })
  .openapi('ColonyDiagnostics')
