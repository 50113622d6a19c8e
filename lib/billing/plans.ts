/** Plans from the spec ("Plans"): agents (-1 unlimited), memory, monthly GBP price, and what they unlock. */
export const PLANS = {
  solo: { agents: 1, memoryGb: 2, monthlyGbp: 29, features: ['agents', 'channels:1', 'gateway', 'skills'] },
  collective: { agents: 3, memoryGb: 4, monthlyGbp: 69, features: ['agents', 'channels', 'gateway', 'skills'] },
  label: { agents: 10, memoryGb: 8, monthlyGbp: 149, features: ['agents', 'channels', 'gateway', 'skills', 'white-label-emails'] },
  network: { agents: -1, memoryGb: 16, monthlyGbp: 499, features: ['agents', 'channels', 'gateway', 'skills', 'white-label-emails', 'white-label-reselling'] },
} as const

export type PlanName = keyof typeof PLANS
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[]

const LEGACY: Record<string, PlanName> = { starter: 'solo', pro: 'collective', scale: 'label' }

/** A stored or legacy plan name as one of the four plans; unknown, unset and the deprecated `free` read as `solo`. */
export function normalizePlan(plan: string | null | undefined): PlanName {
  if (plan && plan in PLANS) return plan as PlanName
  if (plan && plan in LEGACY) return LEGACY[plan]
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
