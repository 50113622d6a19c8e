import type { Scan } from './scan/object'
import { hasDownload, type SkillRow } from '../../lib/skills/manifest'

/** A catalog row: the skill and how many installations have it enabled now (across every user). */
export type CatalogRow = SkillRow & { installs: number }

/** The average rating to one decimal, 0 when unrated (spec 2 "Skill"). */
export const averageRating = (sum: number, count: number) => (count > 0 ? Math.round((sum / count) * 10) / 10 : 0)

/** The Skill resource (spec 2) of a row, with the caller's own rating (null when none, or without a session). */
export const skillJson = (row: CatalogRow, userRating: number | null) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  category: row.category,
  author: row.author,
  code: row.code,
  featured: row.featured,
  downloads: row.downloads,
  rating: averageRating(row.ratingSum, row.ratingCount),
  ratingCount: row.ratingCount,
  installs: row.installs,
  userRating,
  hasDownload: hasDownload(row),
  mcpEnabled: row.mcpEnabled,
  mcpConfig: row.mcpConfig ?? null,
  widgetUrl: row.widgetUrl,
  widgetConfig: row.widgetConfig ?? null,
  scan: publicScan(row.scan),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

export type SkillJson = ReturnType<typeof skillJson>

/**
 * A stored scan as the API shows it: `verified` only when an admin's review is recorded with it (rows written
 * before reviews existed were `verified` by their source URL alone: they show as `review`).
 */
export function publicScan(stored: Record<string, unknown>): Scan {
  const { trustTier, riskLevel, installAllowed, reasons, warnings, requiresManualReview, reviewedBy } = stored as unknown as Scan & { reviewedBy?: string }
  return { trustTier: trustTier === 'verified' && !reviewedBy ? 'review' : trustTier, riskLevel, installAllowed, reasons, warnings, requiresManualReview }
}
