import type { PlanName } from '../../lib/billing/plans'

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

export interface StorageQuota {
  /** The plan the quota comes from. */
  plan: PlanName
  limitBytes: number
}

/**
 * The caller's quota for an upload, from the plan of their paid access (lib/auth/plan.ts `requirePaidAccess`:
 * an admin's is network's, the trial's solo's). Uploading needs paid access (402 without), so there is no unpaid
 * quota; files stored before a lapse or past a lower quota stay (they can be listed, downloaded and deleted).
 */
export function storageQuota(plan: PlanName): StorageQuota {
  return { plan, limitBytes: STORAGE_QUOTA_BYTES[plan] }
}
