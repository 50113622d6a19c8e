/** Permission tiers of a tool call (spec 2 "Tool-call classification result"), strictest last. */
export type ToolTier = 'safe' | 'dangerous' | 'destructive'

export interface ToolClassification {
  tier: ToolTier
  reason: string
}

const RANK: Record<ToolTier, number> = { safe: 0, dangerous: 1, destructive: 2 }

/** True when `a` is strictly stricter than `b`. */
export function stricter(a: ToolTier, b: ToolTier): boolean {
  return RANK[a] > RANK[b]
}

/**
 * A piece of user input fit to quote in a reason: one line, at most `max` characters. Reasons go back to the
 * runtime and to the dashboard, so a token that happens to sit in an argument is never echoed in full.
 */
export function quote(text: string, max = 48): string {
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}
