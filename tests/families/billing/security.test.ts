import { eq } from 'drizzle-orm'
import { describe, expect, it, vi } from 'vitest'
import { spendUnits } from '../../../lib/billing/usage'
import { open } from '../../../lib/secret-box'
import { providerKeys, users } from '../../../schema'
import { BROWSER, useFixture, useHarness } from '../../support/harness'
import { expectOwnRowsOnly } from '../../support/rls'
import { startStripeServer, stripeEnv } from '../../support/stripe-server'
import { action, billing, billingAction, freshUser, getBilling, storedUser } from './helpers'

const stripe = useFixture(() => startStripeServer())
const h = useHarness(() => ({ env: { ...stripeEnv(stripe), LOG_REQUESTS: '1' } }))

describe('billing: authentication', () => {
  it('GET and every POST action are 401 without a session, and touch nothing', async () => {
    const res = await getBilling(h)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
    const before = stripe.requests.length
    for (const body of [
      { action: 'create-checkout', plan: 'solo' },
      { action: 'buy-credits', pack: 50 },
      { action: 'enable-byok', apiKey: 'k', provider: 'openai' },
      { action: 'disable-byok' },
      { action: 'get-usage' },
    ]) {
      const r = await billingAction(h, undefined, body)
      expect(r.status).toBe(401)
    }
    expect(stripe.requests.length).toBe(before)
  })

  it('a cookie-authenticated POST from a foreign Origin is 403 and enables nothing', async () => {
    const user = await freshUser(h)
    const res = await h.web.request('/api/billing', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...BROWSER, origin: 'https://evil.example', cookie: user.cookie },
      body: JSON.stringify({ action: 'enable-byok', apiKey: 'attacker-key', provider: 'openai' }),
    })
    expect(res.status).toBe(403)
    expect(await h.db.select().from(providerKeys).where(eq(providerKeys.userId, user.id))).toHaveLength(0)
  })
})

describe('billing: one user never reaches another', () => {
  it("bob's billing shows nothing of alice's key; the row policy keeps provider_keys to their owner", async () => {
    const alice = await freshUser(h, 'alice')
    const bob = await freshUser(h, 'bob')
    await action(h, alice, { action: 'enable-byok', apiKey: 'alice-secret-key', provider: 'openai' })
    await action(h, bob, { action: 'enable-byok', apiKey: 'bob-secret-key', provider: 'anthropic' })
    expect(await billing(h, bob)).toMatchObject({ byokEnabled: true, byokProvider: 'anthropic' })
    // bob disabling removes only his own
    await action(h, bob, { action: 'disable-byok' })
    expect(await billing(h, alice)).toMatchObject({ byokEnabled: true, byokProvider: 'openai' })
    await expectOwnRowsOnly(h.db, alice.id, providerKeys)
  })

  it("a sealed key copied onto another user's row does not open (the owner is bound into the ciphertext)", async () => {
    const alice = await freshUser(h, 'alice')
    const bob = await freshUser(h, 'bob')
    await action(h, alice, { action: 'enable-byok', apiKey: 'alice-only', provider: 'openai' })
    const [row] = await h.db.select().from(providerKeys).where(eq(providerKeys.userId, alice.id))
    await expect(open(h.services.config, row, bob.id, 'byok')).rejects.toThrow()
    await expect(open(h.services.config, row, alice.id, 'calendar:access')).rejects.toThrow()
    expect(await open(h.services.config, row, alice.id, 'byok')).toBe('alice-only')
  })

  it('a checkout is bound to the caller: client_reference_id and metadata name the session user, never the body', async () => {
    const alice = await freshUser(h, 'alice')
    const bob = await freshUser(h, 'bob')
    await action(h, alice, { action: 'buy-credits', pack: 50, userId: bob.id, client_reference_id: bob.id })
    const session = stripe.sessions.at(-1)!
    expect(session.client_reference_id).toBe(alice.id)
    expect(session.metadata.userId).toBe(alice.id)
  })
})

describe('billing: secrets stay out of answers and logs', () => {
  it('the BYOK key never appears in a response or a log line', async () => {
    const user = await freshUser(h)
    const secret = `byok-${crypto.randomUUID()}`
    const lines: string[] = []
    const capture = (...args: unknown[]) => void lines.push(args.map(String).join(' '))
    const spies = [vi.spyOn(console, 'log').mockImplementation(capture), vi.spyOn(console, 'info').mockImplementation(capture), vi.spyOn(console, 'warn').mockImplementation(capture), vi.spyOn(console, 'error').mockImplementation(capture)]
    try {
      const enabled = await billingAction(h, user, { action: 'enable-byok', apiKey: secret, provider: 'openai' })
      expect(await enabled.text()).not.toContain(secret)
      const shown = await getBilling(h, user)
      expect(await shown.text()).not.toContain(secret)
    } finally {
      for (const s of spies) s.mockRestore()
    }
    expect(lines.length).toBeGreaterThan(0) // request lines were on
    expect(lines.join('\n')).not.toContain(secret)
  })
})

describe('billing: credits are spent only from their owner', () => {
  it("one user's spends past the allowance take only their own credits, and each sees only their own balance", async () => {
    const alice = await freshUser(h, 'alice')
    const bob = await freshUser(h, 'bob')
    for (const u of [alice, bob]) await h.db.update(users).set({ credits: 1 }).where(eq(users.id, u.id))
    await spendUnits(h.services, alice.id, 'solo', 600)
    await Promise.allSettled(Array.from({ length: 12 }, () => spendUnits(h.services, alice.id, 'solo', 10)))
    expect(await storedUser(h, alice.id)).toMatchObject({ credits: 0, creditUnits: 0 })
    expect(await storedUser(h, bob.id)).toMatchObject({ credits: 1, creditUnits: 0 })
    expect(await billing(h, bob)).toMatchObject({ credits: 1, creditUnits: 100, usage: { used: 0 } })
    expect(await action(h, alice, { action: 'get-usage' })).toMatchObject({ used: 600, credits: 0, creditUnits: 0 })
  })

  it('nothing in a billing request moves credits: extra fields naming units or balances are ignored', async () => {
    const user = await freshUser(h)
    const res = await billingAction(h, user, { action: 'get-usage', credits: 1000, creditUnits: 100000, userId: 'someone' })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ credits: 0, creditUnits: 0 })
    expect(await storedUser(h, user.id)).toMatchObject({ credits: 0, creditUnits: 0 })
  })
})
