import { eq } from 'drizzle-orm'
import { calendarConnections } from '../../schema'
import type { Config } from '../../lib/config'
import type { AppContext } from '../../lib/context'
import type { Db } from '../../lib/db/rls'
import { withUser } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { unavailableDependency } from '../../lib/http/dependency'
import { errorFields, log } from '../../lib/log'
import { getGoogleDiscovery, googleClient, type GoogleClient } from '../../lib/oidc/google'
import { open, seal } from '../../lib/secret-box'
import {
  calendarFetch,
  calendarNotConfigured,
  calendarNotConnected,
  calendarUnavailable,
  GrantRevoked,
  refreshAccessToken,
  type CalendarCall,
  type CalendarRequest,
  type Tokens,
} from './google'

/**
 * A user's calendar connection (table `calendar_connections`, always read and written as that user): tokens
 * sealed with lib/secret-box.ts under the owner and a purpose per token, opened only to call Google.
 */
export interface Connection {
  userId: string
  calendarId: string
  timezone: string
  tokens: Tokens
}

const ACCESS = 'calendar:access'
const REFRESH = 'calendar:refresh'
/** An access token this close to its expiry is refreshed before use. */
const EXPIRY_MARGIN_MS = 60 * 1000

/** The sealed columns for `tokens`, both under the current key (the row has one `key_id`). */
async function sealTokens(config: Config, userId: string, tokens: Tokens) {
  const access = await seal(config, tokens.accessToken, userId, ACCESS)
  const refresh = tokens.refreshToken ? await seal(config, tokens.refreshToken, userId, REFRESH) : null
  if (refresh && refresh.keyId !== access.keyId) throw new ApiError('MISCONFIGURED')
  return {
    keyId: access.keyId,
    accessToken: access.sealed,
    refreshToken: refresh?.sealed ?? null,
    tokenExpiresAt: tokens.expiresAt,
  }
}

/** Stores (or replaces) `userId`'s connection as connected, as that user: the OAuth callback's last step. */
export async function saveConnection(db: Db, config: Config, conn: Connection) {
  const sealed = await sealTokens(config, conn.userId, conn.tokens)
  const now = new Date()
  const values = { calendarId: conn.calendarId, timezone: conn.timezone, ...sealed, connected: true, updatedAt: now }
  await withUser(db, conn.userId, (tx) =>
    tx
      .insert(calendarConnections)
      .values({ userId: conn.userId, ...values })
      .onConflictDoUpdate({ target: calendarConnections.userId, set: values }),
  )
}

/**
 * Whether `userId` has a live connection: a row not marked disconnected whose tokens open with this server's keys
 * (tokens sealed under a key it no longer has are lost: the calendar reads as not connected, the user connects again).
 */
export async function isConnected(c: AppContext, userId: string) {
  return (await loadConnection(c, userId)) !== null
}

/** The live connection of `userId` with its tokens opened, or null (none, disconnected, or unreadable). */
async function loadConnection(c: AppContext, userId: string): Promise<Connection | null> {
  const { config, reader } = c.var.services
  const [row] = await reader.asUser(userId, (db) =>
    db.select().from(calendarConnections).where(eq(calendarConnections.userId, userId)).limit(1),
  )
  if (!row?.connected) return null
  try {
    const accessToken = await open(config, { keyId: row.keyId, sealed: row.accessToken }, userId, ACCESS)
    const refreshToken = row.refreshToken ? await open(config, { keyId: row.keyId, sealed: row.refreshToken }, userId, REFRESH) : null
    return { userId, calendarId: row.calendarId, timezone: row.timezone, tokens: { accessToken, refreshToken, expiresAt: row.tokenExpiresAt } }
  } catch (e) {
    // A key no longer configured or a value that does not open: the tokens are lost, the user connects again.
    log.warn('calendar.tokens_unreadable', errorFields(e))
    return null
  }
}

/** Marks the connection dead (the grant was revoked): `status` then says false and calls answer "not connected". */
async function markDisconnected(c: AppContext, userId: string) {
  await withUser(c.var.services.db, userId, (tx) =>
    tx.update(calendarConnections).set({ connected: false, updatedAt: new Date() }).where(eq(calendarConnections.userId, userId)),
  )
  log.info('calendar.disconnected', { userId, reason: 'grant revoked' })
}

/** Google's OAuth client for the calendar, or 503 `Calendar not configured`. */
export function calendarClient(config: Config) {
  const client = googleClient(config)
  if (!client) throw calendarNotConfigured()
  return client
}

/**
 * The caller's calendar, ready to call: 503 when Google is not configured, 401 `Calendar not connected`
 * without a live connection. Its `call` sends a Calendar API request with the stored access token; an expired
 * token, or a 401 from Google, is refreshed once per request and the new token stored. A refresh answered
 * `invalid_grant` marks the connection disconnected and answers 401. The database or kv store failing meanwhile is
 * their 503; any other failure is `PROVIDER_UNAVAILABLE`.
 */
export async function openCalendar(c: AppContext, userId: string) {
  const client = calendarClient(c.var.services.config)
  const conn = await loadConnection(c, userId)
  if (!conn) throw calendarNotConnected()
  const session = new CalendarSession(c, client, conn)
  return { calendarId: conn.calendarId, timezone: conn.timezone, call: session.call }
}

class CalendarSession {
  private refreshed = false

  constructor(
    private readonly c: AppContext,
    private readonly client: GoogleClient,
    private readonly conn: Connection,
  ) {}

  readonly call: CalendarCall = async (req, opts = {}) => {
    try {
      const expiry = this.conn.tokens.expiresAt?.getTime()
      if (!this.refreshed && expiry !== undefined && expiry - EXPIRY_MARGIN_MS <= Date.now()) await this.refresh()
      let answer = await this.send(req)
      if (answer.status === 401 && !this.refreshed) {
        await this.refresh()
        answer = await this.send(req)
      }
      if (answer.ok) return answer.body
      if ((answer.status === 404 || answer.status === 410) && opts.notFound) throw opts.notFound()
      log.warn('calendar.provider_refused', { dependency: 'google', method: req.method, status: answer.status })
      throw calendarUnavailable()
    } catch (e) {
      // A store of ours failing (the token's database write, the discovery cache) is its own 503, not Google's.
      if (e instanceof ApiError || unavailableDependency(e)) throw e
      log.warn('calendar.provider_failed', { dependency: 'google', method: req.method, ...errorFields(e) })
      throw calendarUnavailable()
    }
  }

  private send(req: CalendarRequest) {
    return calendarFetch(this.c.var.services.config.GOOGLE_CALENDAR_API_URL, this.conn.tokens.accessToken, req, this.c.var.services.config.GOOGLE_TIMEOUT_MS)
  }

  /** Once per request: a new access token, stored sealed before it is used. */
  private async refresh() {
    this.refreshed = true
    const { config, kv, db } = this.c.var.services
    const { userId, tokens } = this.conn
    if (!tokens.refreshToken) {
      await markDisconnected(this.c, userId)
      throw calendarNotConnected()
    }
    let fresh: Tokens
    try {
      const discovery = await getGoogleDiscovery(kv, config)
      fresh = await refreshAccessToken(discovery.token_endpoint, this.client, tokens.refreshToken)
    } catch (e) {
      if (e instanceof GrantRevoked) {
        await markDisconnected(this.c, userId)
        throw calendarNotConnected()
      }
      throw e
    }
    const next: Tokens = { ...fresh, refreshToken: fresh.refreshToken ?? tokens.refreshToken }
    const sealed = await sealTokens(config, userId, next)
    await withUser(db, userId, (tx) =>
      tx
        .update(calendarConnections)
        .set({ ...sealed, updatedAt: new Date() })
        .where(eq(calendarConnections.userId, userId)),
    )
    this.conn.tokens = next
    log.info('calendar.token_refreshed', { userId })
  }
}
