import { z } from '@hono/zod-openapi'
import { DIAGNOSTIC_COMMANDS, HEARTBEAT_FREQUENCIES } from '../../lib/runtime/provider'
import { PROBE_PATHS, RUNTIME_STATUSES } from '../../lib/runtime/probe'

const iso = (description?: string) => z.string().max(64).openapi({ format: 'date-time', ...(description ? { description } : {}) })

export const UserIdParams = z.object({
  userId: z.string().max(255).openapi({ param: { name: 'userId', in: 'path' }, description: 'The instance id: the owner’s user id' }),
})

export const ProbeCheckSchema = z
  .object({
    path: z.enum(PROBE_PATHS),
    ok: z.boolean(),
    status: z.number().int().min(100).max(599).nullable().openapi({ format: 'int32', description: 'HTTP status; null when nothing answered' }),
    reason: z.string().max(1024).nullable().openapi({ description: 'Why the probe failed; null when ok' }),
  })
  .openapi('ProbeCheck')

const probeChecks = z.array(ProbeCheckSchema).max(3)
const runtimeStatus = z.enum(RUNTIME_STATUSES)

export const InstanceSchema = z
  .object({
    userId: z.string().max(255),
    status: runtimeStatus.openapi({ description: 'Derived by probing (spec classification table)' }),
    statusReason: z.string().max(2048).nullable().openapi({ description: 'Set when status is not running/healthy' }),
    probeChecks,
    startedAt: iso().nullable(),
    subdomain: z.string().max(255).openapi({ description: 'Hostname of `url`' }),
    url: z.string().max(2048).openapi({ description: 'The persisted runtime URL, else the derived default' }),
    plan: z.string().max(32).openapi({ description: '`free` when unset' }),
    runtimeVersion: z.string().max(128),
    ffmpegAvailable: z.boolean(),
    ffmpegVersion: z.string().max(128).nullable(),
    provisionedAt: iso().nullable(),
    lastSeenAt: iso().nullable(),
    gatewayProcessStatus: z.string().max(32).nullable().openapi({ description: '`active` while running or healthy, `inactive` when stopped, else null' }),
    subscriptionStatus: z.string().max(32).nullable(),
  })
  .openapi('Instance')

export const InstanceStatsSchema = z
  .object({
    userId: z.string().max(255),
    status: runtimeStatus.openapi({ description: '`running` when the probe says healthy, else the probe status' }),
    health: z.string().max(32).openapi({ description: '`healthy` for running or healthy, else the probe status' }),
    cpu: z.string().max(16).openapi({ example: '0%' }),
    memory: z.string().max(16).openapi({ example: '0MB' }),
    uptime: z.string().max(64).openapi({ description: 'The probe’s value, else `active` or `unknown`' }),
    messages: z.null(),
    errors: z.null(),
    runtimeVersion: z.string().max(128),
    statusReason: z.string().max(2048).nullable(),
    probeChecks,
    telemetry: z.object({ resourceMetricsAvailable: z.boolean(), lifecycleMetricsAvailable: z.boolean(), messageMetricsAvailable: z.boolean() }),
  })
  .openapi('InstanceStats')

export const LifecycleResultSchema = z
  .object({
    success: z.literal(true),
    action: z.string().max(32),
    agentId: z.string().max(255),
    status: z.string().max(32).openapi({ description: 'The agent’s recorded status after the action (`starting`, `stopped`, ...)' }),
    deployed: z.boolean().openapi({ description: 'True when the action created the runtime (start without an agent)' }),
  })
  .openapi('InstanceActionResult')

const frequency = z.enum(HEARTBEAT_FREQUENCIES, { error: 'frequency must be one of 30m, 1h, 2h, 3h, 6h, 12h' })
const agentIdField = z.string({ error: 'agentId required' }).min(1, 'agentId required').max(255, 'Agent not found')

export const HeartbeatQuery = z.object({
  agentId: z.string().max(255).optional().openapi({ param: { name: 'agentId', in: 'query' }, description: 'One of the caller’s agents; default the caller’s instance' }),
})

export const HeartbeatSchema = z
  .object({
    source: z.enum(['gateway', 'db']),
    enabled: z.boolean(),
    frequency: z.enum(HEARTBEAT_FREQUENCIES).optional(),
    nextRun: iso().nullable().optional(),
    lastRun: iso().nullable().optional(),
    message: z.string().max(1024).optional().openapi({ description: 'With `source: db`: why the stored setting is shown' }),
  })
  .openapi('Heartbeat')

export const HeartbeatBody = z
  .object(
    {
      agentId: agentIdField.optional().openapi({ description: 'Required when the gateway write fails (the database fallback needs it)' }),
      frequency: frequency.optional().openapi({ description: 'Default: the agent’s current frequency (`1h` for a new one)' }),
      enabled: z.boolean({ error: 'enabled must be a boolean' }).default(true),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('HeartbeatUpdate')

export const HeartbeatDeleteBody = z.object({ agentId: agentIdField }, { error: 'agentId required' }).openapi('HeartbeatDisable')

export const HeartbeatWriteSchema = z
  .object({ success: z.literal(true), source: z.enum(['gateway', 'db']), enabled: z.boolean(), frequency: z.enum(HEARTBEAT_FREQUENCIES) })
  .openapi('HeartbeatWritten')

export const CHANNEL_PROVIDERS = ['webchat', 'telegram', 'discord', 'whatsapp'] as const

export const ChannelsSchema = z
  .object({
    channels: z
      .array(
        z.object({
          name: z.string().max(64),
          provider: z.enum(CHANNEL_PROVIDERS),
          status: z.enum(['connected', 'not-configured', 'unreachable']),
          lastActive: iso().nullable(),
          messages: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64' }),
        }),
      )
      .max(4),
    gatewayHealth: z.enum(['healthy', 'unreachable']),
    source: z.literal('gateway'),
  })
  .openapi('Channels')

export const DebugBody = z
  .object(
    {
      command: z.enum(DIAGNOSTIC_COMMANDS, {
        error: (iss) => (iss.input === undefined ? 'command and agentId are required' : 'Command not allowed'),
      }),
      agentId: z.string({ error: 'command and agentId are required' }).min(1, 'command and agentId are required').max(255, 'Agent not found'),
    },
    { error: 'command and agentId are required' },
  )
  .openapi('DebugCommand')

export const DebugResultSchema = z
  .object({
    command: z.enum(DIAGNOSTIC_COMMANDS),
    output: z.string().max(1_000_000),
    exitCode: z.number().int().min(-1).max(255).openapi({ format: 'int32', description: '0 is success' }),
    duration: z.number().int().min(0).max(600_000).openapi({ format: 'int32', description: 'Milliseconds the command took in the runtime' }),
    timestamp: iso(),
  })
  .openapi('DebugResult')

export const DashboardCheckSchema = z
  .object({
    timestamp: iso(),
    status: z.literal('ok'),
    checks: z.object({ database: z.enum(['ok', 'error']), gateway: z.enum(['ok', 'error', 'unknown']), auth: z.enum(['ok', 'error']) }),
  })
  .openapi('DashboardCheck')

export const SupportDiagnosticsSchema = z
  .object({
    serviceHealth: z
      .array(z.object({ name: z.string().max(64), status: z.enum(['ok', 'degraded', 'down']), detail: z.string().max(256).nullable() }))
      .max(8),
    trialCount: z.number().int().min(0).max(1).openapi({ format: 'int32', description: '1 while the caller’s free trial is live, else 0' }),
    tokenStatus: z.enum(['present', 'missing']).openapi({ description: 'Whether the caller’s instance has a gateway token this server can read (`missing` when it has none, or one sealed under a key this server no longer has)' }),
    recentErrors: z
      .array(z.object({ id: z.string().max(255), name: z.string().max(256), updatedAt: iso(), status: z.literal('error') }))
      .max(5),
    gatewayUrl: z.string().max(2048).nullable().openapi({ description: 'The caller’s instance runtime URL, null without one' }),
    timestamp: iso(),
  })
  .openapi('SupportDiagnostics')
