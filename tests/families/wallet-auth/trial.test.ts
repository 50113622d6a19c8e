import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { agents, users } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import { BROWSER, useHarness } from '../../support/harness'
import { sessionCookie, signInTempo, usersWithEmail, walletEmail } from './flow'

/**
 * A throwaway key buys no compute (0-decisions "Access over time"): every new account gets the 7-day trial, but the
 * trial is paid access only with a verified real mailbox, and a wallet's derived address is not one. Tempo sign-in
 * (chain 4217) needs no RPC, so a fresh key is all an attacker spends.
 */
const h = useHarness({ env: { PROVISIONING_ENABLED: '1' } })

const as = (cookie: string, method: string, path: string, body?: unknown) =>
  h.web.request(path, { method, headers: { ...BROWSER, cookie, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })

describe('a wallet account from a fresh key', () => {
  const wallet = privateKeyToAccount(generatePrivateKey())
  let cookie: string
  let userId: string

  beforeAll(async () => {
    const { res } = await signInTempo(h, wallet)
    expect(res.status).toBe(200)
    cookie = sessionCookie(res)
    userId = (await res.json()).user.id
  })

  it('has the trial’s dates (GET /api/trial) and its derived address counts as proven by the signature', async () => {
    const [row] = await usersWithEmail(h, walletEmail(wallet.address))
    expect(row.emailVerifiedAt).toBeInstanceOf(Date)
    const trial = await (await as(cookie, 'GET', '/api/trial')).json()
    expect(trial).toMatchObject({ active: true, daysRemaining: 7, endsAt: row.trialEndsAt!.toISOString() })
  })

  it('but no paid access from it: provisioning is 403, the skills backing agent 402, and no agent exists', async () => {
    const provision = await as(cookie, 'POST', '/api/provision', {})
    expect(provision.status).toBe(403)
    expect(await provision.json()).toEqual({ error: 'Active subscription required', code: 'SUBSCRIPTION_REQUIRED' })
    const install = await as(cookie, 'POST', '/api/skills/install', { skillId: 'platform-web-search', agentId: userId })
    expect(install.status).toBe(402)
    expect(await install.json()).toEqual({ error: 'Paid plan required', code: 'PLAN_REQUIRED' })
    expect(await h.db.select().from(agents).where(eq(agents.userId, userId))).toEqual([])
  })

  it('a wallet account that buys a plan provisions like any other', async () => {
    await setPlan(h.db, userId, 'solo', 'sub_wallet')
    const res = await as(cookie, 'POST', '/api/provision', { name: 'paid-by-wallet' })
    expect(res.status).toBe(201)
    expect((await res.json()).agent).toMatchObject({ name: 'paid-by-wallet', plan: 'solo' })
    const [row] = await h.db.select({ plan: users.plan }).from(users).where(eq(users.id, userId))
    expect(row.plan).toBe('solo')
  })
})
