import type { PlanName } from '../billing/plans'

/**
 * The runtime provider port: everything done to an agent's runtime goes through it. Two adapters: Railway
 * (lib/runtime/railway.ts, its GraphQL API over fetch, runs on Workers) and local processes
 * (infra/local-runtime-provider.ts, Node only, the embedded default of `npm start`). Home and link
 * installations are registered runtimes: probed, never created through a provider.
 *
 * Infrastructure operations (create, start, stop, ...) are the adapter's own; what happens inside a running
 * runtime (diagnostics, memory reset, the gateway's sessions, channels and cron jobs, chat, sync) goes over the
 * runtime's own HTTP API (lib/runtime/gateway.ts), the same for every adapter.
 */

/** The ten diagnostic commands `POST /api/debug` allows (spec "Diagnostics and hooks"); nothing else is ever run. */
export const DIAGNOSTIC_COMMANDS = [
  'gateway.restart',
  'runtime.doctor',
  'runtime.logs.tail',
  'runtime.status',
  'runtime.config.show',
  'runtime.memory.stats',
  'runtime.skills.list',
  'runtime.channels.status',
  'runtime.cron.list',
  'runtime.version',
] as const
export type DiagnosticCommand = (typeof DIAGNOSTIC_COMMANDS)[number]

/** Heartbeat frequencies (spec "Health and heartbeat"). */
export const HEARTBEAT_FREQUENCIES = ['30m', '1h', '2h', '3h', '6h', '12h'] as const
export type HeartbeatFrequency = (typeof HEARTBEAT_FREQUENCIES)[number]
/** The id of the runtime's heartbeat cron job (its gateway's `cronJobs()`; infra/runtime/state.ts answers it). */
export const HEARTBEAT_JOB_ID = 'heartbeat'
/** A stored frequency as the gateway takes it: one of HEARTBEAT_FREQUENCIES, else the default `1h`. */
export const heartbeatFrequency = (value: string): HeartbeatFrequency =>
  (HEARTBEAT_FREQUENCIES as readonly string[]).includes(value) ? (value as HeartbeatFrequency) : '1h'

/** Port on which a runtime answers its probes and gateway API (spec "Agent status probe": internal port 18789). */
export const RUNTIME_PORT = 18789

/** What a provider needs to create one agent's runtime. */
export interface RuntimeSpec {
  agentId: string
  userId: string
  /** The service name: `agent-<agentId>` (Railway's fallback lookup matches on it). */
  name: string
  image: string
  plan: PlanName
  /** The runtime's environment: never a platform secret (no INTERNAL_API_KEY, database or Stripe keys). */
  env: Record<string, string>
  /** The token the runtime's gateway API requires (`Authorization: Bearer`), stored encrypted by the platform. */
  gatewayToken: string
}

/** What exists once `create` returned: persisted by the caller as the agent's `runtimeServiceId` and URL. */
export interface CreatedRuntime {
  serviceId: string
  /** The runtime's base URL (public domain on Railway, loopback locally): probes and gateway calls go here. */
  url: string
}

/** The runtime an operation is for, as the platform has it stored. */
export interface RuntimeTarget {
  agentId: string
  name: string
  /** The persisted `runtimeServiceId`: used first; null makes Railway list the project's services by name. */
  serviceId: string | null
  url: string | null
  gatewayToken: string | null
  /** How long one gateway call (not chat, not a diagnostic) may take: `RUNTIME_GATEWAY_TIMEOUT_MS`; default GATEWAY_TIMEOUT_MS. */
  gatewayTimeoutMs?: number
}

export interface DiagnosticResult {
  command: DiagnosticCommand
  output: string
  exitCode: number
  /** Milliseconds the command took, measured where it ran. */
  durationMs: number
}

export interface LogLine {
  /** ISO 8601. */
  timestamp: string
  stream: 'stdout' | 'stderr'
  line: string
}

export interface GatewaySession {
  id: string
  channel: 'webchat' | 'telegram' | 'discord' | 'whatsapp'
  lastActive: string | null
  messages: number
}

export interface CronJob {
  id: string
  name: string
  enabled: boolean
  frequency: HeartbeatFrequency
  nextRun: string | null
  lastRun: string | null
}

/** What the platform pushes on `POST /api/agents/:id/sync`. */
export interface SyncPayload {
  skills: Array<{ name: string; version: string; manifest: unknown }>
  memories: Array<{ key: string; value: string }>
  files: Array<{ name: string; url: string; size: number }>
}

/** The longest chat text a runtime takes (and `POST /api/gateway/chat` accepts). */
export const MAX_CHAT_TEXT = 32_000

/**
 * One chat message to a runtime. `deliveryId` names the delivery (the platform's job id): a runtime that has
 * answered that id already answers the same again without handling the message twice (queue redeliveries).
 */
export interface ChatMessage {
  text: string
  sessionId?: string
  deliveryId?: string
}

/** The runtime's own HTTP API (lib/runtime/gateway.ts implements it over fetch). */
export interface RuntimeGateway {
  sessions(): Promise<GatewaySession[]>
  cronJobs(): Promise<CronJob[]>
  setHeartbeat(job: { enabled: boolean; frequency: HeartbeatFrequency }): Promise<CronJob>
  chat(message: ChatMessage): Promise<{ sessionId: string; reply: string }>
  sync(payload: SyncPayload): Promise<void>
  diagnostic(command: DiagnosticCommand): Promise<DiagnosticResult>
  resetMemory(): Promise<void>
}

export interface RuntimeProvider {
  readonly kind: 'railway' | 'local'
  /** Creates the runtime: image, the plan's resources, a volume at `/data`, the env, a public domain. */
  create(spec: RuntimeSpec): Promise<CreatedRuntime>
  start(target: RuntimeTarget): Promise<void>
  stop(target: RuntimeTarget): Promise<void>
  restart(target: RuntimeTarget): Promise<void>
  updateImage(target: RuntimeTarget, image: string): Promise<void>
  /** Redeploys from the current image and configuration (the watchdog's repair). */
  repair(target: RuntimeTarget): Promise<void>
  /**
   * Gives the runtime a new gateway token and redeploys it with it: the repair of an agent whose stored token can no
   * longer be opened (lib/agents/lifecycle.ts). Found by service id or name, like every other operation.
   */
  rekey(target: RuntimeTarget, gatewayToken: string): Promise<void>
  delete(target: RuntimeTarget): Promise<void>
  /** The runtime's log lines until `signal` aborts: recent history first, then new lines as they come. */
  logs(target: RuntimeTarget, opts: { signal: AbortSignal }): AsyncIterable<LogLine>
  /** The runtime's gateway API (diagnostics, memory reset, sessions, cron, chat, sync). */
  gateway(target: RuntimeTarget): RuntimeGateway
}

/** A provider call that failed: `status` is what the platform answers (502 unreachable, 404 no such service, ...). */
export class RuntimeProviderError extends Error {
  constructor(
    message: string,
    readonly status: 404 | 409 | 502 | 503,
    readonly provider: 'railway' | 'local' | 'runtime',
  ) {
    super(message)
    this.name = 'RuntimeProviderError'
  }
}
