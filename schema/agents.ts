import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { ownedBy, serviceAccess } from './rls'
import { users } from './users'

/**
 * An agent and its managed runtime (spec 2 "Agent"). `status` is what the platform last commanded or learned:
 * `provisioning` (record made, runtime being created), `starting`, `running`, `stopped`, `error` (creation or a
 * lifecycle call failed: `statusReason` says what exists), `template` (a blueprint, never run). The runtime's
 * live state is probed, never stored here (lib/runtime/probe.ts). `runtimeServiceId` is the provider's id, used
 * first by every lifecycle call. The gateway token is sealed (lib/secret-box.ts, purpose `agent-gateway`).
 */
export const agents = pgTable(
  'agents',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    // the plan the agent was provisioned under (solo, collective, label, network)
    plan: text('plan'),
    aiProvider: text('ai_provider'),
    config: jsonb('config').$type<Record<string, unknown>>().notNull().default({}),
    status: text('status').notNull().default('provisioning'),
    statusReason: text('status_reason'),
    // unverified | human_verified (social posts weigh it)
    verification: text('verification').notNull().default('unverified'),
    verifiedAt: timestamp('verified_at', { withTimezone: true }),
    image: text('image'),
    runtimeProvider: text('runtime_provider'),
    runtimeServiceId: text('runtime_service_id'),
    runtimeUrl: text('runtime_url'),
    gatewayTokenKeyId: text('gateway_token_key_id'),
    gatewayToken: text('gateway_token'),
    // the heartbeat job as the database keeps it when the gateway cannot be written (GET/PUT /api/heartbeat)
    heartbeatEnabled: boolean('heartbeat_enabled').notNull().default(false),
    heartbeatFrequency: text('heartbeat_frequency').notNull().default('1h'),
    heartbeatMessage: text('heartbeat_message'),
    provisionedAt: timestamp('provisioned_at', { withTimezone: true }),
    startedAt: timestamp('started_at', { withTimezone: true }),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('agents_user_idx').on(t.userId),
    uniqueIndex('agents_user_name_idx').on(t.userId, t.name),
    ownedBy('agents_owner', t.userId),
    serviceAccess('agents'),
  ],
).enableRLS()

export type Agent = typeof agents.$inferSelect

/**
 * The watchdog's view of one agent (service only): its lifecycle state (`healthy`, `degraded`, `repairing`,
 * `crash_loop`, `stopped`), why, the counters its rules need, and a lease so overlapping sweeps never act on one
 * agent twice. `crashTimes` holds the failures inside the crash-loop window (epoch ms).
 */
export const agentWatchdog = pgTable(
  'agent_watchdog',
  {
    agentId: text('agent_id').primaryKey().references(() => agents.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    state: text('state').notNull().default('healthy'),
    reason: text('reason'),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    repairAttempts: integer('repair_attempts').notNull().default(0),
    crashTimes: jsonb('crash_times').$type<number[]>().notNull().default([]),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    leaseOwner: text('lease_owner'),
    lastProbeAt: timestamp('last_probe_at', { withTimezone: true }),
    nextCheckAt: timestamp('next_check_at', { withTimezone: true }),
    ownerNotifiedAt: timestamp('owner_notified_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('agent_watchdog_next_idx').on(t.nextCheckAt), serviceAccess('agent_watchdog')],
).enableRLS()

/** Every status and watchdog transition, with its reason: readable by the agent's owner, written by the service. */
export const agentEvents = pgTable(
  'agent_events',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    agentId: text('agent_id').notNull().references(() => agents.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    // status (the agent's commanded status) | watchdog (its lifecycle state)
    kind: text('kind').notNull(),
    fromState: text('from_state'),
    toState: text('to_state').notNull(),
    reason: text('reason'),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('agent_events_agent_idx').on(t.agentId, t.at), ownedBy('agent_events_owner', t.userId), serviceAccess('agent_events')],
).enableRLS()
