import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq, inArray } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { sweepPendingDeploys } from '../../functions/stripe/deploy-outbox'
import { CROSS_USER_PURPOSES, withUser } from '../../lib/db/rls'
import { subscriptionDeployOutbox } from '../../schema'
import { useHarness } from '../support/harness'

const h = useHarness()

/** Every `.ts` file under `dir`. */
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []))

const code = ['functions', 'lib', 'infra'].flatMap(sources).map((f) => ({ file: f, text: readFileSync(f, 'utf8') }))

describe('the cross-user purposes (lib/db/rls.ts CROSS_USER_PURPOSES)', () => {
  it('every purpose the code passes to asService is listed, and every listed purpose is used (none kept for nothing)', () => {
    const listed = Object.keys(CROSS_USER_PURPOSES)
    const named = new Set(code.flatMap(({ text }) => [...text.matchAll(/asService\((?:[\w.]+,\s*)?'(\w+)'/g)].map((m) => m[1])))
    expect([...named].filter((p) => !listed.includes(p))).toEqual([])
    // A purpose may reach asService through a variable (functions/stripe/deploy-outbox.ts): named as a literal somewhere else.
    const unused = listed.filter((p) => !code.some(({ file, text }) => !file.endsWith('lib/db/rls.ts') && text.includes(`'${p}'`)))
    expect(unused).toEqual([])
  })

  it('the subscription-deploy sweep has its own purpose: it no longer borrows the Stripe webhook’s', () => {
    const outbox = readFileSync('functions/stripe/deploy-outbox.ts', 'utf8')
    const sweep = outbox.slice(outbox.indexOf('export async function sweepPendingDeploys'))
    expect(sweep).toContain("'subscriptionDeploySweep'")
    expect(sweep).not.toContain("'stripeWebhook'")
    expect(CROSS_USER_PURPOSES.subscriptionDeploySweep).toMatch(/subscription_deploy_outbox/)
  })

  it("the sweep, as its purpose, sees every user's waiting deploys; a user's own transaction sees none of the outbox, not even their own", async () => {
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 8)}@example.com`)
    const old = new Date(Date.now() - 10 * 60_000)
    const rows = [h.users.alice.id, carol.id].map((userId) => ({
      sessionId: `cs_purpose_${crypto.randomUUID()}`,
      userId,
      job: { tier: 'solo', stripeCustomerId: 'cus_1', subscriptionId: null, userId },
      updatedAt: old,
    }))
    await h.db.insert(subscriptionDeployOutbox).values(rows)
    const ids = rows.map((r) => r.sessionId)
    expect(await withUser(h.services.db, carol.id, (tx) => tx.select().from(subscriptionDeployOutbox)).catch((e: unknown) => e)).toBeInstanceOf(Error)

    const published: string[] = []
    const queue = { publish: async (_path: string, body: unknown) => (published.push(JSON.stringify(body)), { messageId: `m${published.length}` }), schedule: async () => ({ scheduleId: 's' }) }
    const done = await sweepPendingDeploys({ db: h.services.db, queue })
    expect(done.found).toBeGreaterThanOrEqual(2)
    for (const r of rows) expect(published.some((b) => b.includes(r.userId))).toBe(true)
    expect(await h.db.select().from(subscriptionDeployOutbox).where(inArray(subscriptionDeployOutbox.sessionId, ids))).toEqual([])
    await h.db.delete(subscriptionDeployOutbox).where(eq(subscriptionDeployOutbox.userId, carol.id))
  })
})

