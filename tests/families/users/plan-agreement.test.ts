import { describe, expect, it } from 'vitest'
import { PLANS, type PlanName } from '../../../lib/billing/plans'
import { insertApiKey, setPlan } from '../../auth/helpers'
import { useHarness } from '../../support/harness'

// GET /api/user answered `plan: null` where both validate routes answered `solo` for the same user. One
// function (lib/billing/plans.ts `userPlan`) now says what plan a user is on, for all three.
const h = useHarness()

let ip = 0
const fromIp = () => ({ 'cf-connecting-ip': `203.0.113.${++ip}` })

async function plansShown(stored: string | null) {
  const user = await h.seedUser('Plan', `plan-${crypto.randomUUID().slice(0, 8)}@example.com`)
  await setPlan(h.db, user.id, stored)
  const { key } = await insertApiKey(h.db, user.id)
  const me = await h.web.request('/api/user', { headers: { cookie: user.cookie } })
  const web = await h.web.request('/api/keys/validate', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...fromIp() },
    body: JSON.stringify({ apiKey: key }),
  })
  const backend = await h.backend.request('/api/validate-key', { method: 'POST', headers: { authorization: `Bearer ${key}`, ...fromIp() } })
  expect([me.status, web.status, backend.status]).toEqual([200, 200, 200])
  const [u, w, b] = [await me.json(), await web.json(), await backend.json()]
  expect(w.features).toEqual(b.features)
  return { user: u.plan, webValidate: w.plan, backendValidate: b.plan, features: b.features }
}

describe('one plan per user, whichever route answers', () => {
  const cases: Array<[string | null, PlanName]> = [
    [null, 'solo'], // no plan bought: the entry plan, `subscriptionStatus` inactive
    ['network', 'network'],
    ['pro', 'collective'], // a legacy name reads as its plan
    ['free', 'solo'], // the deprecated free plan
  ]
  for (const [stored, shown] of cases)
    it(`stored ${JSON.stringify(stored)}: GET /api/user and both validate routes say ${shown}`, async () => {
      expect(await plansShown(stored)).toEqual({
        user: shown,
        webValidate: shown,
        backendValidate: shown,
        features: [...PLANS[shown].features],
      })
    })
})
