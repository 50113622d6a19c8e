import { type SQL, sql } from 'drizzle-orm'
import { isDerivedEmail, isVerifiedAdmin } from '../auth/accounts'
import type { Config } from '../config'
import { users } from '../../schema'

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

/** Subscription statuses the spec names; Stripe's others are mapped onto these (functions/stripe/subscription.ts). */
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

/** The stored fields of a user that decide paid access (`accessPlan`): plan, subscription, trial, mailbox. */
export interface PlanRecord {
  plan: string | null
  subscriptionStatus: string
  trialEndsAt: Date | null
  email: string
  emailVerifiedAt: Date | null
}

/** What the rule needs from the configuration: who the admins are, and the domain of derived addresses. */
export type AccessConfig = Pick<Config, 'ADMIN_EMAILS' | 'serviceDomain'>

/** Subscription statuses that pay for a plan: `active` (Stripe's own trial reads as active) and `past_due` (retrying). */
export const PAID_STATUSES = ['active', 'past_due'] as const

const paidSubscription = (r: Pick<PlanRecord, 'plan' | 'subscriptionStatus'>) =>
  !!r.plan && r.plan !== 'free' && (PAID_STATUSES as readonly string[]).includes(r.subscriptionStatus)

/**
 * The account's own trial counts only with a verified real mailbox: a confirmed email or Google's `email_verified`.
 * The derived addresses of wallet and Farcaster accounts are "verified" by their sign-in but receive no mail, so a
 * throwaway key would buy a week of compute: they never count.
 */
const trialCounts = (r: PlanRecord, config: AccessConfig, now: number) =>
  !!r.trialEndsAt && r.trialEndsAt.getTime() > now && !!r.emailVerifiedAt && !isDerivedEmail(config, r.email)

/**
 * Paid access, the one rule every gate, provisioning, the files quota, the gateway's card, `requirePlanMatch` and
 * the watchdog's reconciliation apply: the plan whose limits the user has now, or null without paid access.
 * - a verified admin (`ADMIN_EMAILS`): `network`, whatever is stored (admins are exempt from payment);
 * - a plan (not the deprecated `free`) whose subscription is `active` or `past_due`: that plan;
 * - the account's 7-day trial with a verified real mailbox: `solo` (the trial gives solo's limits);
 * - anything else (no plan bought, a subscription `canceled` or `inactive`, the trial over): null.
 * `paidAccessSql` below is the same rule as SQL, for the sweep's one query; keep them together.
 */
export function accessPlan(record: PlanRecord, config: AccessConfig, now = Date.now()): PlanName | null {
  if (isVerifiedAdmin(config, record)) return 'network'
  if (paidSubscription(record)) return normalizePlan(record.plan)
  if (trialCounts(record, config, now)) return 'solo'
  return null
}

/** Whether the user has paid access now (`accessPlan` is not null). */
export const hasPaidAccess = (record: PlanRecord, config: AccessConfig, now = Date.now()): boolean => accessPlan(record, config, now) !== null

const listSql = (values: readonly string[]) => sql.join(values.map((v) => sql`${v}`), sql`, `)
const adminSql = (config: AccessConfig) =>
  config.ADMIN_EMAILS.length ? sql`(${users.emailVerifiedAt} is not null and ${users.email} in (${listSql(config.ADMIN_EMAILS)}))` : sql`false`
const paidSubscriptionSql = () => sql`(${users.plan} is not null and ${users.plan} <> 'free' and ${users.subscriptionStatus} in (${listSql(PAID_STATUSES)}))`

/**
 * `accessPlan` as SQL over a `users` row (the sweep finds lapsed users in one query): true when the row has paid
 * access at `now`. Emails are stored lower-cased, as `ADMIN_EMAILS` is read.
 */
export function paidAccessSql(config: AccessConfig, now: Date): SQL {
  const admins = adminSql(config)
  const paid = paidSubscriptionSql()
  const derived = sql`substring(${users.email} from '@([^@]*)$') in (${`wallet.${config.serviceDomain}`}, ${`farcaster.${config.serviceDomain}`})`
  const trial = sql`(${users.trialEndsAt} > ${now.toISOString()}::timestamptz and ${users.emailVerifiedAt} is not null and not coalesce(${derived}, false))`
  return sql`coalesce((${admins} or ${paid} or ${trial}), false)`
}

/**
 * The number of agents `accessPlan` allows a `users` row with paid access, as SQL (-1: unlimited): an admin's is
 * network's, a paid plan's its own (legacy names as their plan, unknown ones as solo), a trial's solo's.
 */
export function agentLimitSql(config: AccessConfig): SQL {
  const admins = adminSql(config)
  const paid = paidSubscriptionSql()
  // The counts are this file's constants, written as literals so the expression is an integer.
  const n = (plan: PlanName) => sql.raw(String(PLANS[plan].agents))
  const byName = [...Object.keys(PLANS), ...Object.keys(LEGACY_PLANS)].map((name) => sql`when ${name} then ${n(normalizePlan(name))}`)
  return sql`(case when ${admins} then ${n('network')} when ${paid} then (case ${users.plan} ${sql.join(byName, sql` `)} else ${n('solo')} end) else ${n('solo')} end)`
}
