import { sql } from 'drizzle-orm'
import type { BatchItem } from 'drizzle-orm/batch'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'

/** The non-superuser role every signed-in user's queries run as; RLS policies are written for it. */
export const APP_ROLE = 'app_user'
/** The role the listed cross-user queries run as (`CROSS_USER_PURPOSES` below). */
export const SERVICE_ROLE = 'app_service'

/**
 * How long one statement may run on the server before Postgres cancels it (57014, answered 503
 * `DATABASE_UNAVAILABLE`): set with the row-isolation settings, so it bounds every transaction on every driver
 * without a round trip of its own.
 */
export const STATEMENT_TIMEOUT_MS = 10_000
/** How long opening a connection may take (node-postgres and the Neon WebSocket pool). */
export const CONNECT_TIMEOUT_MS = 5_000
/**
 * How long the client waits for one statement's answer (node-postgres `query_timeout`, a Neon HTTP request): past the
 * server's own timeout, so it fires only when the network stops answering.
 */
export const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 2_000

/** The timeouts of one database handle; tests shorten them. */
export interface DatabaseTimeouts {
  connectTimeoutMs?: number
  queryTimeoutMs?: number
}

/** What `watchConnection` needs of a node-postgres (or Neon driver) pooled client. */
interface PgLikeClient {
  query(...args: unknown[]): unknown
  end(): Promise<void>
  on(event: 'error', listener: (e: Error) => void): unknown
  /** Set by the pool at each checkout (pg-pool); undefined before the first. */
  release?: (err?: Error | boolean) => void
}

/** node-postgres's own state of a client (not typed): ended or broken, it answers no query any more. */
const isDead = (client: PgLikeClient) => {
  const state = client as unknown as { _ending?: boolean; _queryable?: boolean }
  return state._ending === true || state._queryable === false
}

/**
 * Every new pooled connection (node-postgres, and the Neon driver's pool, a fork of it); register on the pool:
 * `pool.on('connect', watchConnection)`.
 * - A statement without an answer within the query timeout closes the connection: node-postgres would leave it
 *   waiting for that answer for ever, and hand it out again.
 * - A connection that is closed or broken while checked out goes back to the pool at once, with its error (the pool
 *   drops it), and the holder's own release later does nothing. drizzle's `transaction()` sends BEGIN before its
 *   try/finally: a BEGIN that fails (no answer, a reset) would otherwise leave the connection checked out for ever,
 *   until the pool is exhausted and `pool.end()` never resolves.
 * - Its socket's errors are listened to for its whole life. The pool listens only while it is idle; one checked out
 *   whose socket is reset emits `error` with nobody listening, which Node throws out of the process (the local
 *   server would exit). Its queries get the error all the same (503 `DATABASE_UNAVAILABLE`).
 */
export function watchConnection(client: PgLikeClient) {
  client.on('error', () => {}) // the queries and the pool's idle listener report it; this one only keeps it in
  const query = client.query.bind(client)
  client.query = (...args: unknown[]) => {
    const answer = query(...args)
    if (answer instanceof Promise) {
      answer.catch((e: unknown) => {
        if (e instanceof Error && e.message === 'Query read timeout') client.end().catch(() => {})
        if (isDead(client)) giveBack(client, e)
      })
    }
    return answer
  }
}

/** Releases a dead client to its pool now (dropped there for `err`), once: later releases do nothing. */
function giveBack(client: PgLikeClient, err: unknown) {
  const release = client.release
  if (!release) return
  client.release = () => {}
  try {
    release(err instanceof Error ? err : new Error(String(err)))
  } catch {
    // already released by its holder: nothing to give back
  }
}

const statementTimeout = sql`set_config('statement_timeout', ${String(STATEMENT_TIMEOUT_MS)}, true)`

/**
 * The row-isolation settings of `withUser` and `asService` (and the statement timeout), each one statement (one
 * round trip: `role` is a setting too). `set_config(..., true)` is SET LOCAL: it lasts the transaction (or the Neon batch).
 */
export const userSettings = (userId: string) => sql`select set_config('app.user_id', ${userId}, true), set_config('role', ${APP_ROLE}, true), ${statementTimeout}`
export const serviceSettings = () => sql`select set_config('role', ${SERVICE_ROLE}, true), ${statementTimeout}`

/**
 * Runs `fn` in one transaction as `APP_ROLE` with `app.user_id` set, so the tables' row-level-security
 * policies confine it to `userId`'s rows even when a query forgets its `where`.
 */
export function withUser<T>(db: Db, userId: string, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(userSettings(userId))
    return fn(tx as unknown as Db)
  })
}

/**
 * Runs `fn` in one transaction as `SERVICE_ROLE`: the only way to read or write across users. `purpose`
 * names the entry of `CROSS_USER_PURPOSES` that allows it, so every such query is listed in one file.
 */
export function asService<T>(db: Db, _purpose: CrossUserPurpose, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(serviceSettings())
    return fn(tx as unknown as Db)
  })
}

/** `withUser` for the signed-in caller of a route behind `requireSession` (its `SignedInEnv` has `user`). */
export const asUser = <T>(c: { var: { services: { db: Db }; user: { id: string } } }, fn: (tx: Db) => Promise<T>) =>
  withUser(c.var.services.db, c.var.user.id, fn)

/** A drizzle statement not yet run: what a `Reader` sends (awaitable alone, batchable on Neon's HTTP endpoint). */
export type Statement<T> = PromiseLike<T> & BatchItem<'pg'>
/** One statement, or several run in order where only the last one's result is wanted. */
export type Statements<T> = Statement<T> | readonly [...Statement<unknown>[], Statement<T>]

/**
 * Statements as a user (or as the service role, for a listed purpose) in as few database round trips as the
 * driver allows: one on Neon's HTTP endpoint (the settings and the statements go as one batch, which Neon runs
 * as one transaction), one transaction elsewhere. Answers the last statement's result. Work that decides
 * between statements on their results keeps `withUser`/`asService`.
 */
export interface Reader {
  asUser<T>(userId: string, build: (db: Db) => Statements<T>): Promise<T>
  asService<T>(purpose: CrossUserPurpose, build: (db: Db) => Statements<T>): Promise<T>
}

/** The statements `build` returns, as a list. */
export const statementList = <T>(built: Statements<T>): Statement<unknown>[] => (Array.isArray(built) ? [...built] : [built as Statement<T>])

/** Runs `statements` one after another in the caller's transaction; answers the last one's result. */
export async function runStatements<T>(statements: Statement<unknown>[]): Promise<T> {
  let last: unknown
  for (const statement of statements) last = await statement
  return last as T
}

/** The statements `build` makes on `tx`, run in order (`runStatements`). */
export const runInOrder = <T>(tx: Db, build: (db: Db) => Statements<T>) => runStatements<T>(statementList(build(tx)))


/** The `Reader` for drivers with interactive transactions only (PGlite, node-postgres). */
export const transactionReader = (db: Db): Reader => ({
  asUser: (userId, build) => withUser(db, userId, (tx) => runInOrder(tx, build)),
  asService: (purpose, build) => asService(db, purpose, (tx) => runInOrder(tx, build)),
})

/** `Reader.asUser` for the signed-in caller of a route behind `requireSession`. */
export const readAsUser = <T>(c: { var: { services: { reader: Reader }; user: { id: string } } }, build: (db: Db) => Statements<T>) =>
  c.var.services.reader.asUser(c.var.user.id, build)

/**
 * Any drizzle Postgres database: Neon (Workers), node-postgres or PGlite (local). Built without the relational
 * schema (handles are made per request; see lib/db/neon.ts), so queries use the SQL-like builder, not `db.query`.
 */
export type Db = PgDatabase<PgQueryResultHKT>

/**
 * Every query that must see across users runs through `asService(db, purpose, fn)` (lib/db/rls.ts) as the
 * role `app_service`, and names one of these purposes. This list is the whole of the app's cross-user access:
 * a new entry is a security decision, reviewed here.
 */
export const CROSS_USER_PURPOSES = {
  sessionLookup: 'Resolve a session cookie: the session by its token hash, with its user',
  sessionLifecycle: 'Start and end sessions at sign-in and sign-out, and remove expired ones',
  apiKeyLookup: 'Resolve an API key by its prefix, then compare its hash',
  signIn: 'Find or create the user at sign-up and sign-in: by email, by (provider, subject), by passkey credential; clear an unverified account its provider-proven owner takes over',
  passwordReset: 'Issue and redeem password reset tokens for an email; a reset also ends sessions, removes passkeys, marks the email verified and keeps or revokes API keys',
  emailVerification: 'Issue and redeem email verification tokens (by token hash), and credit the referral a verification completes',
  referral: 'Find a referrer by code and record the referral at sign-up; give an account created without one its referral code',
  invites: 'Verify and redeem invite codes; admin invite lists and admin-made invites',
  riscEvents: "Google RISC events: record them, and end the affected users' sessions and links",
  mailOutbox: 'Write the dev outbox, whoever the mail is for',
  localInbox: "The local server's mail inbox page (infra/local-pages.ts, local development without a mail provider only): read the dev outbox, newest first",
  farcasterRefresh: 'Refresh a Farcaster session token: check that the user it names still exists (no session yet)',
  identityLookup: 'The backend resolves a user named by verified identity headers or the shared key',
  stripeWebhook:
    'Apply verified Stripe events and checkouts (webhook, checkout verify): record each event once, find the user by Stripe customer or checkout reference, set plan, status and period, grant paid credits once, and credit a paid wallet top-up once to the card-funded payment session (made on its first top-up)',
  creditSpend:
    "Spend a signed-in user's own credits once today's usage units are spent, and give back those of a call that then failed: one conditional UPDATE of their row's credit balance (users cannot write their credits)",
  userInvites: "Create a signed-in user's guest invite: the route fixes the audience, so users get no INSERT on invites",
  agentsForUser: "List a user's agents for the internal shared-key route `GET /api/agents/user/:userId` (never the gateway token)",
  agentLifecycle: "The backend's shared-key lifecycle routes (`POST /api/agents/:id/start|stop|restart|repair`): find the agent by id, whoever owns it",
  subscriptionDeploy: "The backend records a paid subscription's runtime tier for the Stripe customer's user (shared key)",
  subscriptionDeploySweep:
    "The subscription-deploy sweep's cron (functions/stripe/deploy-outbox.ts): read the deploys of every user's paid checkouts still in subscription_deploy_outbox past the bound, publish each again, and record its failed attempt or remove it once the queue took it (no other table)",
  watchdog:
    "The watchdog's sweep over every user's running agents: find the agents due a check, lease them, record each probe's outcome and transition (agent_watchdog, agent_events, the agent's last-seen time, starting → running, and starting again after a repair), and read the owner's email for the crash-loop notice",
  heartbeatSync:
    "The heartbeat cron reads every live (running or starting) agent's row, opens its sealed gateway token and calls its gateway to write the stored heartbeat setting there when the gateway's job differs",
  gatewayPayments:
    'The paid gateway (anonymous wallets, no user): record each on-chain payment once (MPP credentials, session deposits), open payment sessions, and debit them against single-use voucher nonces; show a signed-in user the balance of the card-funded sessions their own top-ups named',
  chatDelivery:
    "The chat queue receiver delivers a user's job to their agent's runtime: read the job and its agent (the sealed gateway token), record attempts, result and status",
  permissionHook:
    'The tool-call hook (internal key) records a dangerous call as a permission request for the agent\'s owner, and reads its state when the hook polls',
  permissionExpiry:
    "The permission expiry queue receiver marks a request nobody decided within 10 minutes `expired` (a denial), once, and reads its owner to tell their dashboards",
  radioStreams:
    'DJ radio sessions belong to wallets, not users: open a session for a wallet (its guest pass, its one current session, its session fee recorded once in chain_payments), end it with its DJ access token, expire it after 2 hours, and list current sessions for the public live view',
  muxWebhook: 'Apply verified Mux webhook events once (mux_events) to the radio session streaming to that live stream',
  skillCatalog:
    "The public skills catalog, signed in or not: read skills with each one's count of enabled installations across every user (a count, never whose), and write the platform's own skills into it when they are missing",
  skillCounters:
    "Counters on a skill's public catalog row, which users cannot update: a user's first download of a skill in a UTC day adds one to `downloads`; a rating upserts the caller's own rating and moves the skill's `rating_sum` and `rating_count` by the difference in the same transaction, under the skill row's lock",
  localRestart:
    "The local server's start (infra/local-restart.ts): find every user's agents on local runtimes still recorded as starting or running (their processes ended with the previous server), so each can be recorded stopped as its owner",
  skillReview: "An admin's review of a skill (users cannot update skills): its stored scan becomes `verified`, with the reviewer and the time",
  // Paid access over time (functions/cron/watchdog/reconcile.ts, functions/cron/watchdog/batch.ts).
  accessReconciliation:
    "The watchdog's reconciliation of paid access: rank every user's agents that hold a plan's place with their owner's plan, subscription, trial and mailbox fields to find those whose owner's paid access ended or which are past the plan's count, stop their runtimes and mark them suspended with the transition; and read a degraded agent's owner's access before a repair",
  localQueue:
    "The local server's embedded queue (infra/local-queue.ts): its outbox of messages and its cron schedules, no user's rows, read back at start so a restart delivers what was pending",
  queuedSweep:
    "The sweep of records waiting on a queue message that may be lost (functions/chat/sweep.ts): chat jobs of every user still queued past the bound, published again under their deduplication id",
} as const

export type CrossUserPurpose = keyof typeof CROSS_USER_PURPOSES
