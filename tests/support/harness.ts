import { afterAll, beforeAll } from 'vitest'
import { createBackendApp } from '../../functions/backend/app'
import { createWebApp } from '../../functions/web'
import { createNodeServices } from '../../infra/services'
import { hashSecret } from '../../lib/auth/password'
import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../../lib/auth/session'
import type { Services } from '../../lib/context'
import { cfClientIp } from '../../lib/http/client-ip'
import { sessions, users } from '../../schema'
import { apiContracts, checkedApp } from './response-contract'
import { openTestStores, type TestStoreOptions } from './stores'

export interface SeededUser {
  id: string
  email: string
  name: string
  token: string
  /** `Cookie` header value carrying the user's session. */
  cookie: string
}

export interface HarnessOptions {
  env?: Record<string, string | undefined>
  /**
   * Every seeded user (alice, bob, admin, and `seedUser`'s unless it says otherwise) is on this plan with an active
   * subscription: for families whose tests use agents, which needs paid access at each use. Without it seeded users
   * have no paid access (no plan, no trial).
   */
  plan?: string
  /** How the stores are opened: `{ faults: true }` puts them behind switchable faults (`h.storeFaults`). */
  stores?: TestStoreOptions
}

/**
 * The plan of `HarnessOptions.plan` for families whose tests use agents but are not about plans: paid access at each
 * use, and 10 agents of room.
 */
export const PAYING = 'label'

export const ADMIN_EMAIL = 'admin@example.com'
export const PASSWORD = 'correct horse battery staple'
/** What a browser on the dashboard sends: a real user agent and the trusted origin. */
export const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0', origin: 'http://localhost:3000' }

/**
 * The apps as the local server mounts them, on this file's own fresh stores, with two users (alice, bob)
 * and an admin already signed in. Requests go through `app.request()`; the client IP is `CF-Connecting-IP`.
 * Every answer a test gets from `web` or `backend` is checked against its OpenAPI document (./response-contract.ts):
 * one that breaks it rejects with the operation, the status and what differs. Queue deliveries go to the app itself.
 */
export async function createHarness(opts: HarnessOptions = {}) {
  const harnessOpts = opts
  const stores = await openTestStores(opts.stores)
  // Each harness gets its own limiter namespace so parallel files never share counters on real Redis.
  const ns = crypto.randomUUID().slice(0, 8)
  const env = {
    APP_ORIGIN: 'http://localhost:3000',
    ADMIN_EMAILS: ADMIN_EMAIL,
    SESSION_SECRET: 'test-session-secret',
    DATA_DIR: '.test-data',
    PASSWORD_HASH_COST: '4', // the fast hash: production's cost 10 is measured in README
    LOG_REQUESTS: '0', // a test that checks the `request` line asks for it
    ...opts.env,
  }
  const node = await createNodeServices({
    env,
    database: stores.appDatabase,
    kv: stores.kv,
    clientIp: (c) => `${ns}:${cfClientIp(c)}`,
  })
  const services = node.services

  const web = createWebApp(node.provider)
  node.setDeliver((req) => Promise.resolve(web.fetch(req)))
  const backendApp = createBackendApp(node.provider)
  const contracts = await apiContracts()

  const db = stores.database.db
  /**
   * A user with password `PASSWORD`, a live session and a verified email (`{verified: false}` for one that is not), on
   * the harness's `plan` (`{plan: null}` for none, or another plan).
   */
  async function seedUser(name: string, email: string, opts: { verified?: boolean; plan?: string | null } = {}): Promise<SeededUser> {
    const passwordHash = await hashSecret(PASSWORD, 4)
    const emailVerifiedAt = opts.verified === false ? null : new Date()
    const plan = opts.plan === undefined ? (harnessOpts.plan ?? null) : opts.plan
    const [user] = await db
      .insert(users)
      .values({ email: email.toLowerCase(), name, passwordHash, emailVerifiedAt, ...(plan ? { plan, subscriptionStatus: 'active' } : {}) })
      .returning()
    const token = newSessionToken()
    await db.insert(sessions).values({ tokenHash: await hashSessionToken(token), userId: user.id, expiresAt: new Date(Date.now() + SESSION_TTL_MS) })
    return { id: user.id, email, name, token, cookie: `${SESSION_COOKIE}=${token}` }
  }
  const alice = await seedUser('Alice', `alice-${ns}@example.com`)
  const bob = await seedUser('Bob', `bob-${ns}@example.com`)
  const admin = await seedUser('Admin', ADMIN_EMAIL)

  return {
    web: checkedApp(web, contracts.web),
    backend: checkedApp(backendApp, contracts.backend),
    db,
    services,
    stores: stores.name,
    /** With `stores: { faults: true }`: the switches that take the app's stores down (tests/support/stores.ts `StoreFaults`). */
    storeFaults: stores.faults,
    /** Cumulative database and kv traffic of this harness's stores (tests/support/round-trips.ts). */
    traffic: stores.traffic,
    users: { alice, bob, admin },
    seedUser,
    async close() {
      await node.close().catch(() => {})
      await stores.close()
    },
  }
}

export type Harness = Awaited<ReturnType<typeof createHarness>>

/** Runs `fn` with the harness's services changed (node services are one plain object every request reads). */
export async function withServices<T>(h: Harness, changes: Partial<{ -readonly [K in keyof Services]: Services[K] }>, fn: () => Promise<T>): Promise<T> {
  const services = h.services as { -readonly [K in keyof Services]: Services[K] }
  const saved = Object.fromEntries(Object.keys(changes).map((k) => [k, services[k as keyof Services]]))
  Object.assign(services, changes)
  try {
    return await fn()
  } finally {
    Object.assign(services, saved)
  }
}

/**
 * Registers `beforeAll` (creates the fixture with `create`) and `afterAll` (closes it) in the current file or
 * `describe`, and returns a stand-in for the fixture: reading a property reads the live fixture's, so the returned
 * value is used like the fixture itself (`h.users.alice`, `call(h, ...)`) once the tests run. `afterAll` closes only
 * what was created; hooks registered after this one see the fixture, and close before it (vitest's `stack` order).
 */
export function useFixture<T extends object>(create: () => Promise<T>, opts: { close?: (fixture: T) => unknown; timeout?: number } = {}): T {
  const close = opts.close ?? ((fixture: T) => (fixture as unknown as { close(): unknown }).close())
  let current: T | undefined
  const live = () => {
    if (!current) throw new Error('fixture used before its beforeAll ran (or after it failed)')
    return current
  }
  const absent = (key: string | symbol) => !current && (key === 'then' || typeof key === 'symbol')
  beforeAll(async () => {
    current = await create()
  }, opts.timeout)
  afterAll(async () => {
    const created = current
    current = undefined
    if (created) await close(created)
  })
  return new Proxy({} as T, {
    get: (_, key) => (absent(key) ? undefined : Reflect.get(live(), key)),
    set: (_, key, value) => Reflect.set(live(), key, value),
    has: (_, key) => Reflect.has(live(), key),
    ownKeys: () => Reflect.ownKeys(live()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(live(), key)
      return d && { ...d, configurable: true }
    },
    defineProperty: (_, key, d) => Reflect.defineProperty(live(), key, d),
    deleteProperty: (_, key) => Reflect.deleteProperty(live(), key),
  })
}

/**
 * A harness of this file's own (fresh stores, fresh users) for the tests of the current file or `describe`: created in
 * `beforeAll`, closed in `afterAll`. `opts` may be a function, for options known only once an earlier `beforeAll` ran
 * (a fake provider's URL).
 */
export const useHarness = (opts: HarnessOptions | (() => HarnessOptions | Promise<HarnessOptions>) = {}): Harness =>
  useFixture(async () => createHarness(typeof opts === 'function' ? await opts() : opts))
