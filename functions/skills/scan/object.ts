/** The Scan object (spec 2): how far a skill is trusted and why. Kept apart from the scanner (and its parser). */
export interface Scan {
  trustTier: 'trusted' | 'verified' | 'review' | 'blocked'
  riskLevel: 'low' | 'medium' | 'high' | 'blocked'
  installAllowed: boolean
  /** Why it is blocked (empty unless blocked). */
  reasons: string[]
  /** What a reader should know before installing (informational). */
  warnings: string[]
  requiresManualReview: boolean
}

export const TRUST_TIERS = ['trusted', 'verified', 'review', 'blocked'] as const
export const RISK_LEVELS = ['low', 'medium', 'high', 'blocked'] as const

/** The scan of the platform's own skills (functions/skills/catalog.ts): never produced from user input. */
export const TRUSTED_SCAN: Readonly<Scan> = Object.freeze({
  trustTier: 'trusted',
  riskLevel: 'low',
  installAllowed: true,
  reasons: [],
  warnings: [],
  requiresManualReview: false,
})
