import { PLANS, type PlanName } from '../../lib/billing/plans'

/**
 * Tier names the subscription deploy accepts (spec: backend `POST /api/subscriptions/deploy`) and the runtime
 * each gets. The four plans take their own resources; the legacy names map onto the plan they became
 * (starter → solo, pro → collective, scale → label). The rest are chosen here: `underground` is an entry tier
 * (solo's 2 GB / 1 CPU), `enterprise` and `white_glove` are above network (32 GB / 8 CPUs).
 */
export const DEPLOY_TIERS = ['solo', 'collective', 'label', 'network', 'underground', 'starter', 'pro', 'scale', 'enterprise', 'white_glove'] as const
export type DeployTier = (typeof DEPLOY_TIERS)[number]

const planResources = (plan: PlanName) => ({ memoryGb: PLANS[plan].memoryGb, cpus: PLANS[plan].cpus })

export const TIER_RESOURCES: Record<DeployTier, { memoryGb: number; cpus: number }> = {
  solo: planResources('solo'),
  collective: planResources('collective'),
  label: planResources('label'),
  network: planResources('network'),
  starter: planResources('solo'),
  pro: planResources('collective'),
  scale: planResources('label'),
  underground: planResources('solo'),
  enterprise: { memoryGb: 32, cpus: 8 },
  white_glove: { memoryGb: 32, cpus: 8 },
}
