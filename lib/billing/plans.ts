/**
 * Plans from the spec ("Plans"): agents (-1 unlimited), memory, monthly GBP price, and what they unlock.
 * `dailyUnits` is the daily usage allowance: the spec's sample plan (solo) shows 600; the others are chosen
 * roughly in proportion to price (29 : 69 : 149 : 499 GBP) and rounded, and documented in the OpenAPI document.
 * `cpus` is the runtime's share (subscription deploy, runtimes): solo 1, collective 2, label 4, network 4.
 */
export const PLANS = {
  solo: { agents: 1, memoryGb: 2, cpus: 1, monthlyGbp: 29, dailyUnits: 600, features: ['agents', 'channels:1', 'gateway', 'skills'] },
  collective: { agents: 3, memoryGb: 4, cpus: 2, monthlyGbp: 69, dailyUnits: 1500, features: ['agents', 'channels', 'gateway', 'skills'] },
  label: { agents: 10, memoryGb: 8, cpus: 4, monthlyGbp: 149, dailyUnits: 3000, features: ['agents', 'channels', 'gateway', 'skills', 'white-label-emails'] },
  network: { agents: -1, memoryGb: 16, cpus: 4, monthlyGbp: 499, dailyUnits: 10000, features: ['agents', 'channels', 'gateway', 'skills', 'white-label-emails', 'white-label-reselling'] },
} as const

export type PlanName = keyof typeof PLANS
export const PLAN_NAMES = Object.keys(PLANS) as [PlanName, ...PlanName[]]

/** Names the spec's billing responses map onto today's plans. */
export const LEGACY_PLANS: Record<string, PlanName> = { starter: 'solo', pro: 'collective', scale: 'label' }

/** Subscription statuses the spec names; Stripe's others are mapped onto these (lib/billing/subscription.ts). */
export const SUBSCRIPTION_STATUSES = ['active', 'inactive', 'past_due', 'canceled'] as const
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number]

/** A stored `subscriptionStatus` as one of the four (anything else reads as `inactive`). */
export const knownStatus = (s: string | null | undefined): SubscriptionStatus =>
  (SUBSCRIPTION_STATUSES as readonly (string | null | undefined)[]).includes(s) ? (s as SubscriptionStatus) : 'inactive'

/** A stored or legacy plan name as one of the four plans; unknown, unset and the deprecated `free` read as `solo`. */
export function normalizePlan(plan: string | null | undefined): PlanName {
  if (plan && plan in PLANS) return plan as PlanName
  if (plan && plan in LEGACY_PLANS) return LEGACY_PLANS[plan]
  return 'solo'
}

/**
 * The plan a user is on, as every route shows it (`GET /api/user`, both validate routes): the stored
 * `users.plan` is null until a plan is bought, and such a user is on `solo`, the entry plan, with its
 * features (`subscriptionStatus` says whether it is paid for). Legacy names read as their plan.
 */
export function userPlan(stored: string | null | undefined): { plan: PlanName; features: string[] } {
  const plan = normalizePlan(stored)
  return { plan, features: [...PLANS[plan].features] }
}

/** The stored fields that decide whether a user may use paid features. */
export interface PlanRecord {
  plan: string | null
  subscriptionStatus: string
  trialEndsAt: Date | null
}

/**
 * Whether a user may use what a paid plan unlocks (spec: "a paid plan (minimum `solo`) is required"; new
 * accounts get a 7-day trial): a plan other than the deprecated `free` whose subscription is `active` (Stripe's
 * own trial reads as active) or `past_due` (Stripe is still retrying the card), or a live account trial.
 * Admins bypass this check where they bypass payment; callers decide that.
 */
export function hasPaidAccess(record: PlanRecord, now = Date.now()): boolean {
  const paid = !!record.plan && record.plan !== 'free' && (record.subscriptionStatus === 'active' || record.subscriptionStatus === 'past_due')
  return paid || (!!record.trialEndsAt && record.trialEndsAt.getTime() > now)
}
