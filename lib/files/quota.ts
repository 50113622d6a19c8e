import { hasPaidAccess, normalizePlan, type PlanName, type PlanRecord } from '../billing/plans'

const MiB = 1024 * 1024
const GiB = 1024 * MiB

/**
 * Bytes of files a user may keep (stored and uploading), per plan: solo 1 GiB, collective 5 GiB, label 20 GiB,
 * network 100 GiB. Documented in the OpenAPI description of `POST /api/files` and in the README.
 */
export const STORAGE_QUOTA_BYTES: Record<PlanName, number> = {
  solo: 1 * GiB,
  collective: 5 * GiB,
  label: 20 * GiB,
  network: 100 * GiB,
}

/** Without paid access (no plan bought or the subscription lapsed, and no live trial): 100 MiB, under solo's. */
export const UNPAID_QUOTA_BYTES = 100 * MiB

export interface StorageQuota {
  /** The plan the quota comes from; null without paid access. */
  plan: PlanName | null
  limitBytes: number
}

/**
 * The caller's quota, by the rule provisioning uses (lib/agents/provision.ts): an admin's is network's; paid
 * access (an active or past-due subscription, or the account's trial, which runs on solo) gives the plan's;
 * anyone else gets the unpaid allowance. Files already stored past a lower quota stay; new uploads are refused.
 */
export function storageQuota(record: PlanRecord, isAdmin: boolean, now = Date.now()): StorageQuota {
  if (isAdmin) return { plan: 'network', limitBytes: STORAGE_QUOTA_BYTES.network }
  if (!hasPaidAccess(record, now)) return { plan: null, limitBytes: UNPAID_QUOTA_BYTES }
  const plan = normalizePlan(record.plan)
  return { plan, limitBytes: STORAGE_QUOTA_BYTES[plan] }
}
