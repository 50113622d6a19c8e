import { z } from '@hono/zod-openapi'
import { PLAN_NAMES, SUBSCRIPTION_STATUSES } from '../../lib/billing/plans'
import { countField } from '../../lib/http/fields'

const PlanSchema = z
  .object({
    agents: z.number().int().min(-1).max(1000).openapi({ format: 'int32', description: '-1: unlimited' }),
    memoryGb: countField(),
    cpus: countField(),
    monthlyPrice: countField().openapi({ description: 'Whole GBP per month' }),
    currency: z.literal('GBP'),
    price: z.string().max(32).openapi({ example: '£29.00' }),
    dailyUnits: countField().openapi({ description: 'Daily usage allowance in units (reset at midnight UTC)' }),
    features: z.array(z.string().max(64)).max(32),
  })
  .openapi('Plan')

export const UsageSchema = z
  .object({ dailyUnits: countField(), used: countField(), remaining: countField() })
  .openapi('Usage')

const CreditUnitsField = countField().openapi({
  description: 'The credit balance in usage units: `credits × 100` plus what is left of the credit already opened (a call takes units, not whole credits)',
})

export const BillingSchema = z
  .object({
    plans: z.object(Object.fromEntries(PLAN_NAMES.map((p) => [p, PlanSchema])) as Record<(typeof PLAN_NAMES)[number], typeof PlanSchema>),
    currentPlan: z.enum([...PLAN_NAMES, 'free']).openapi({
      description:
        'The plan the caller is on: legacy names read as their plan (starter → solo, pro → collective, scale → label); ' +
        'a user who has bought none is on `solo` (as `GET /api/user` shows), `subscriptionStatus` says whether it is paid. ' +
        'The deprecated `free` is reported as itself with `deprecated: true`.',
    }),
    deprecated: z.boolean().openapi({ description: 'True when the stored plan is the deprecated `free` (a paid plan is required)' }),
    subscriptionStatus: z.enum(SUBSCRIPTION_STATUSES),
    byokEnabled: z.boolean().openapi({ description: 'A provider key is stored and opens with this server’s keys; one sealed under a key the server no longer has reads as not set (enable BYOK again)' }),
    byokProvider: z.string().max(64).nullable().openapi({ description: 'The provider of the stored key; the key itself is never returned' }),
    credits: countField().openapi({ description: 'Whole credits left (packs bought, referrals). Once today\'s allowance is spent, calls are paid from credits: 1 credit = 100 units' }),
    creditUnits: CreditUnitsField,
    usage: UsageSchema,
  })
  .openapi('Billing')

export const UsageWithResetSchema = UsageSchema.extend({
  resetsAt: z.string().max(64).openapi({ format: 'date-time', description: 'Next midnight UTC' }),
  credits: countField().openapi({ description: 'Whole credits left; they pay once `remaining` is 0 (1 credit = 100 units)' }),
  creditUnits: CreditUnitsField,
}).openapi('UsageToday')
