import { and, eq, isNotNull, sql } from 'drizzle-orm'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { createVerificationToken } from '../../../functions/auth/email-verification'
import { newMailToken } from '../../../lib/auth/mail-token'
import { REFERRAL_CREDITS, REFERRAL_DAILY_CAP } from '../../../functions/auth/referrals'
import type { Db } from '../../../lib/db/rls'
import { emailVerifications, referrals, users } from '../../../schema'
import { useHarness } from '../../support/harness'
import { getUser } from '../users/helpers'
import { lastVerificationToken, register, verifyEmail } from './flow'

/** Finding 6: referral farming. Credits only when the referred account verifies its email, once, capped per day. */
const h = useHarness()
beforeAll(async () => {
  vi.spyOn(console, 'info').mockImplementation(() => {})
})

let n = 0
let ip = 0
/** A fresh referrer (verified, seeded) and its code as GET /api/user shows it. */
async function referrer() {
  const u = await h.seedUser('Ref', `ref${++n}@example.com`)
  const { referralCode } = await (await getUser(h, u.cookie)).json()
  return { ...u, code: referralCode as string }
}
async function referred(code: string) {
  const email = `friend${++n}@example.com`
  const res = await register(h, { email, password: 'password123', referralCode: code }, `198.51.${103 + Math.floor(++ip / 9)}.${ip % 9}`)
  expect(res.status).toBe(201)
  return { email, id: (await res.json()).id as string }
}
const credits = async (id: string) => (await h.db.select({ c: users.credits }).from(users).where(eq(users.id, id)))[0].c
const creditedCount = async (referrerId: string) =>
  (await h.db.select().from(referrals).where(and(eq(referrals.referrerId, referrerId), isNotNull(referrals.creditedAt)))).length

describe('referrals', () => {
  it('GET /api/user shows the own code; an old account without one gets one, stable across reads', async () => {
    const old = await h.seedUser('Old', 'old@example.com')
    await h.db.update(users).set({ referralCode: null }).where(eq(users.id, old.id))
    const first = (await (await getUser(h, old.cookie)).json()).referralCode
    expect(first).toMatch(/^[A-Z0-9]{10}$/)
    expect((await (await getUser(h, old.cookie)).json()).referralCode).toBe(first)
    expect((await h.db.select().from(users).where(eq(users.id, old.id)))[0].referralCode).toBe(first)
  })

  it('three unverified sign-ups with one code credit nothing to anyone', async () => {
    const ref = await referrer()
    const fakes = [await referred(ref.code), await referred(ref.code.toLowerCase()), await referred(ref.code)]
    expect(await credits(ref.id)).toBe(0)
    for (const f of fakes) expect(await credits(f.id)).toBe(0)
    expect(await h.db.select().from(referrals).where(eq(referrals.referrerId, ref.id))).toHaveLength(3)
    expect(await creditedCount(ref.id)).toBe(0)
  })

  it('verification credits both sides once; a second verification credits nothing more', async () => {
    const ref = await referrer()
    const f = await referred(ref.code)
    expect((await verifyEmail(h, await lastVerificationToken(h, f.email))).status).toBe(200)
    expect(await credits(ref.id)).toBe(REFERRAL_CREDITS)
    expect(await credits(f.id)).toBe(REFERRAL_CREDITS)
    // Another token for the now verified account (as if issued before): verifying again gives nothing.
    const token = await h.db.transaction((tx) => createVerificationToken(tx as unknown as Db, { id: f.id, email: f.email }))
    expect((await verifyEmail(h, token)).status).toBe(200)
    expect(await credits(ref.id)).toBe(REFERRAL_CREDITS)
    expect(await credits(f.id)).toBe(REFERRAL_CREDITS)
  })

  it(`at most ${REFERRAL_DAILY_CAP} credited referrals per referrer per UTC day; the rest stay recorded, uncredited`, async () => {
    const ref = await referrer()
    const friends = []
    for (let i = 0; i < REFERRAL_DAILY_CAP + 2; i++) friends.push(await referred(ref.code))
    for (const f of friends) expect((await verifyEmail(h, await lastVerificationToken(h, f.email))).status).toBe(200)
    expect(await creditedCount(ref.id)).toBe(REFERRAL_DAILY_CAP)
    expect(await credits(ref.id)).toBe(REFERRAL_DAILY_CAP * REFERRAL_CREDITS)
    const late = friends.slice(REFERRAL_DAILY_CAP)
    for (const f of late) expect(await credits(f.id)).toBe(0)
    expect(await h.db.select().from(referrals).where(eq(referrals.referrerId, ref.id))).toHaveLength(REFERRAL_DAILY_CAP + 2)
  })

  it('credits from an earlier UTC day do not count toward today', async () => {
    const ref = await referrer()
    const earlier = []
    for (let i = 0; i < REFERRAL_DAILY_CAP; i++) earlier.push(await referred(ref.code))
    for (const f of earlier) await verifyEmail(h, await lastVerificationToken(h, f.email))
    await h.db.update(referrals).set({ creditedAt: sql`now() - interval '1 day'` }).where(eq(referrals.referrerId, ref.id))
    const today = await referred(ref.code)
    expect((await verifyEmail(h, await lastVerificationToken(h, today.email))).status).toBe(200)
    expect(await credits(today.id)).toBe(REFERRAL_CREDITS)
  })

  it('concurrent verifications of one account (two live tokens) credit once', async () => {
    const ref = await referrer()
    const f = await referred(ref.code)
    const first = await lastVerificationToken(h, f.email)
    // A second live token, inserted directly so both exist (the API keeps only the newest).
    const { token: second, tokenHash } = await newMailToken()
    await h.db.insert(emailVerifications).values({ tokenHash, userId: f.id, email: f.email, expiresAt: new Date(Date.now() + 3_600_000) })
    const results = await Promise.all([verifyEmail(h, first), verifyEmail(h, second)])
    expect(results.map((r) => r.status)).toContain(200)
    expect(await credits(ref.id)).toBe(REFERRAL_CREDITS)
    expect(await credits(f.id)).toBe(REFERRAL_CREDITS)
  })

  it(`concurrent verifications of ${REFERRAL_DAILY_CAP + 3} referred accounts respect the cap`, async () => {
    const ref = await referrer()
    const friends = []
    for (let i = 0; i < REFERRAL_DAILY_CAP + 3; i++) friends.push(await referred(ref.code))
    const tokens = await Promise.all(friends.map((f) => lastVerificationToken(h, f.email)))
    const results = await Promise.all(tokens.map((t) => verifyEmail(h, t)))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect(await creditedCount(ref.id)).toBe(REFERRAL_DAILY_CAP)
    expect(await credits(ref.id)).toBe(REFERRAL_DAILY_CAP * REFERRAL_CREDITS)
  })
})
