import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { startRuntime, type RunningRuntime } from '../../../infra/runtime/runtime'
import { StateFile } from '../../../infra/runtime/state'
import { newGatewayToken } from '../../../lib/agents/access'
import type { Db } from '../../../lib/db/rls'
import { openPostgres } from '../../../infra/database'
import type { SkillJson } from '../../../functions/skills/skill-json'
import type { Scan } from '../../../functions/skills/scan/object'
import { skills, type Agent } from '../../../schema'
import type { Harness, SeededUser } from '../../support/harness'
import { call } from '../../support/requests'
import { seedAgent } from '../instance/helpers'

/** Code the scan finds nothing in. */
export const CLEAN_CODE = "export async function run(q) {\n  const res = await fetch('https://api.example.com/search?q=' + encodeURIComponent(q))\n  return res.json()\n}"
/** Code the scan blocks. */
export const BLOCKED_CODE = 'export const run = (input) => eval(input)'

export const uniqueName = (prefix = 'Skill') => `${prefix} ${crypto.randomUUID().slice(0, 8)}`

/** A fresh signed-in user: the per-user limits of one test never touch another's. */
export const freshUser = (h: Harness, name = 'User') => h.seedUser(name, `${name.toLowerCase()}-${crypto.randomUUID()}@example.com`)

/** `POST /api/skills` that must answer 201: the created skill and its scan. */
export async function createSkill(h: Harness, user: SeededUser, over: Record<string, unknown> = {}): Promise<{ skill: SkillJson; scan: Scan }> {
  const res = await call(h, 'POST', '/api/skills', { user, body: { name: uniqueName(), description: 'Does a useful thing', code: CLEAN_CODE, ...over } })
  const body = await res.json()
  expect(res.status, JSON.stringify(body)).toBe(201)
  return body
}

/** A skill written straight to the catalog (what the API refuses to create: a blocked one, one with no code, ...). */
export async function insertSkill(h: Harness, over: Partial<typeof skills.$inferInsert> = {}) {
  const name = over.name ?? uniqueName('Seeded')
  const [row] = await h.db
    .insert(skills)
    .values({ name, nameKey: name.toLowerCase(), description: 'Seeded', code: CLEAN_CODE, scan: {}, ...over })
    .returning()
  return row
}

export const install = (h: Harness, user: SeededUser, body: unknown) => call(h, 'POST', '/api/skills/install', { user, body })
export const uninstall = (h: Harness, user: SeededUser, body: unknown) => call(h, 'POST', '/api/skills/uninstall', { user, body })

/** A JSON answer with its status checked. */
export async function json<T = any>(res: Response | Promise<Response>, status: number): Promise<T> {
  const r = await res
  const body = await r.json()
  expect(r.status, JSON.stringify(body)).toBe(status)
  return body as T
}

export interface LiveAgent {
  agent: Agent
  /** What the runtime last received from the platform's sync. */
  synced(): ReturnType<StateFile['read']>
  stop(): Promise<void>
}

const running: Array<{ rt: RunningRuntime; dir: string }> = []

/** An agent of `user` whose runtime is the real local runtime program, on loopback, with its own gateway token. */
export async function liveAgent(h: Harness, user: SeededUser, over: Partial<Agent> = {}): Promise<LiveAgent> {
  const sealed = await newGatewayToken(h.services.config, user.id)
  const dir = mkdtempSync(join(tmpdir(), 'skills-runtime-'))
  const rt = await startRuntime(
    { host: '127.0.0.1', port: 0, agentId: 'a', gatewayToken: sealed.token, dataDir: dir, version: '1.0.0', image: null, readyDelayMs: 0 },
    () => {},
  )
  running.push({ rt, dir })
  const agent = await seedAgent(h, user, {
    runtimeUrl: `http://127.0.0.1:${rt.port}`,
    gatewayToken: sealed.gatewayToken,
    gatewayTokenKeyId: sealed.gatewayTokenKeyId,
    ...over,
  })
  return { agent, synced: () => new StateFile(dir).read(), stop: () => rt.stop() }
}

export async function stopRuntimes() {
  for (const { rt, dir } of running.splice(0)) {
    await rt.stop().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A Postgres that is not there: every query fails to connect, as when the database is unreachable. */
export async function unreachableDatabase() {
  const { db, reader, close } = await openPostgres('postgres://nobody:nothing@127.0.0.1:1/none', { migrate: false })
  return { services: { db, reader }, close }
}

/**
 * The harness's database, except that its `n`th transaction from now fails as a dropped connection does (SQLSTATE
 * 57P01): a fault at the driver's edge, for the 500s no request can cause. The test names which transaction of the
 * route it means (each `withUser`/`asService` is one).
 */
export function failingTransaction(h: Harness, n: number): { db: Db } {
  const db = h.services.db
  let calls = 0
  const transaction: Db['transaction'] = (fn, config) => {
    if (++calls === n) return Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))
    return db.transaction(fn, config)
  }
  return { db: new Proxy(db, { get: (target, key) => (key === 'transaction' ? transaction : Reflect.get(target, key)) }) }
}
