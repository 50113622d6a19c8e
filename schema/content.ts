import { sql } from 'drizzle-orm'
import { bigint, boolean, index, integer, jsonb, pgPolicy, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { agents } from './agents'
import { appRole, currentUserId, ownedBy, serviceAccess } from './rls'
import { users } from './users'

/**
 * A stored file (spec 2 "File"), visible only to its uploader. `status` `pending` while the object is being
 * written, `stored` once it is complete: only stored files are listed or served, so a half-written object is
 * never served and a record without its object is cleaned up rather than served. `deleting` once a delete has
 * begun: hidden, still counted, removed only after its object is (lib/files/records.ts). `agentId` becomes null
 * when its agent is deleted: the record outlives the agent, `deleting`, until storage has deleted its object.
 */
export const files = pgTable(
  'files',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    agentId: text('agent_id').references(() => agents.id, { onDelete: 'set null' }),
    filename: text('filename').notNull(),
    storageKey: text('storage_key').notNull().unique(),
    size: bigint('size', { mode: 'number' }).notNull(),
    mimeType: text('mime_type').notNull(),
    status: text('status').notNull().default('pending'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('files_user_idx').on(t.userId, t.agentId), ownedBy('files_owner', t.userId), serviceAccess('files')],
).enableRLS()

/** Bytes a user's files hold (stored and pending): the quota check is one conditional UPDATE of this row. */
export const storageUsage = pgTable(
  'storage_usage',
  {
    userId: text('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
    bytes: bigint('bytes', { mode: 'number' }).notNull().default(0),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [ownedBy('storage_usage_owner', t.userId), serviceAccess('storage_usage')],
).enableRLS()

/**
 * The skills marketplace catalog (spec 2 "Skill"): public, readable by every signed-in user; a user creates
 * skills as their author. Counters (`downloads`, ratings) and `featured` change through the service.
 * `nameKey` is the lower-cased trimmed name: unique, so two concurrent creates of one name give one skill.
 */
export const skills = pgTable(
  'skills',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    name: text('name').notNull(),
    nameKey: text('name_key').notNull(),
    description: text('description').notNull(),
    category: text('category').notNull().default('custom'),
    author: text('author'),
    authorUserId: text('author_user_id').references(() => users.id, { onDelete: 'set null' }),
    code: text('code'),
    sourceUrl: text('source_url'),
    featured: boolean('featured').notNull().default(false),
    downloads: integer('downloads').notNull().default(0),
    ratingSum: integer('rating_sum').notNull().default(0),
    ratingCount: integer('rating_count').notNull().default(0),
    mcpEnabled: boolean('mcp_enabled').notNull().default(false),
    mcpConfig: jsonb('mcp_config').$type<Record<string, unknown> | null>(),
    widgetUrl: text('widget_url'),
    widgetConfig: jsonb('widget_config').$type<Record<string, unknown> | null>(),
    scan: jsonb('scan').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('skills_name_key_idx').on(t.nameKey),
    index('skills_category_idx').on(t.category),
    pgPolicy('skills_read', { as: 'permissive', to: appRole, for: 'select', using: sql`true` }),
    pgPolicy('skills_author_insert', { as: 'permissive', to: appRole, for: 'insert', withCheck: sql`author_user_id = ${currentUserId}` }),
    serviceAccess('skills'),
  ],
).enableRLS()

/** One rating per user per skill (a new rating overwrites); the skill's sum and count move in the same transaction. */
export const skillRatings = pgTable(
  'skill_ratings',
  {
    skillId: text('skill_id').notNull().references(() => skills.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    rating: integer('rating').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.skillId, t.userId] }), ownedBy('skill_ratings_owner', t.userId), serviceAccess('skill_ratings')],
).enableRLS()

/** A skill installed on one of the user's agents (spec 2 "Skill installation"): `enabled` false once disabled. */
export const skillInstallations = pgTable(
  'skill_installations',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    agentId: text('agent_id').notNull().references(() => agents.id, { onDelete: 'cascade' }),
    skillId: text('skill_id').notNull().references(() => skills.id, { onDelete: 'cascade' }),
    enabled: boolean('enabled').notNull().default(true),
    installedAt: timestamp('installed_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('skill_installations_agent_skill_idx').on(t.agentId, t.skillId),
    index('skill_installations_skill_idx').on(t.skillId),
    ownedBy('skill_installations_owner', t.userId),
    serviceAccess('skill_installations'),
  ],
).enableRLS()

/** A social post an agent made (`POST /api/social/posts`); the limiter's counts live in Redis, the posts here. */
export const socialPosts = pgTable(
  'social_posts',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
    agentId: text('agent_id').notNull().references(() => agents.id, { onDelete: 'cascade' }),
    body: text('body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('social_posts_agent_idx').on(t.agentId, t.createdAt), ownedBy('social_posts_owner', t.userId), serviceAccess('social_posts')],
).enableRLS()

/**
 * A DJ radio session (spec 2 "DJ session statuses"): wallets, not users, own them, so the service reads and
 * writes. At most one current (`active` or `live`) session per wallet: a partial unique index. The stream key is
 * never stored (returned once at creation). `accessPath` `holding`, `guest_pass` or `payment` (`txHash` then).
 */
export const radioSessions = pgTable(
  'radio_sessions',
  {
    id: text('id').primaryKey().$defaultFn(() => crypto.randomUUID()),
    wallet: text('wallet').notNull(),
    name: text('name').notNull(),
    city: text('city'),
    streamId: text('stream_id'),
    playbackId: text('playback_id'),
    status: text('status').notNull().default('active'),
    accessPath: text('access_path').notNull(),
    txHash: text('tx_hash').unique(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('radio_sessions_current_idx').on(t.wallet).where(sql`status in ('active', 'live')`),
    index('radio_sessions_stream_idx').on(t.streamId),
    serviceAccess('radio_sessions'),
  ],
).enableRLS()

/** Community guest passes: a wallet may stream without holding the station token until `expiresAt`. */
export const radioGuestPasses = pgTable(
  'radio_guest_passes',
  {
    wallet: text('wallet').primaryKey(),
    grantedBy: text('granted_by'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [serviceAccess('radio_guest_passes')],
).enableRLS()

/** Streaming provider (Mux) webhook events applied, by event id: a redelivery changes nothing. */
export const muxEvents = pgTable(
  'mux_events',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    processedAt: timestamp('processed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  () => [serviceAccess('mux_events')],
).enableRLS()

/** A user's managed (CDP) wallet (`POST /api/wallet` `create`, `POST /api/wallet/create`): one per user. */
export const userWallets = pgTable(
  'user_wallets',
  {
    userId: text('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
    address: text('address').notNull(),
    walletId: text('wallet_id').notNull(),
    network: text('network').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [ownedBy('user_wallets_owner', t.userId), serviceAccess('user_wallets')],
).enableRLS()
