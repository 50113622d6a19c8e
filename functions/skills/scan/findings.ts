/**
 * What each rule of the scanner reports. A `reason` blocks the skill; a `warning` is shown and, at `high`, makes
 * the skill high risk. Messages are stable sentences (clients show them; tests match them).
 */
export type Finding = { kind: 'reason'; message: string } | { kind: 'warning'; level: 'medium' | 'high'; message: string }

/** Findings of one scan, each message once (the text and the syntax tree may both see one thing). */
export class Findings {
  readonly list: Finding[] = []
  private readonly seen = new Set<string>()

  reason(message: string) {
    this.add({ kind: 'reason', message })
  }

  warning(message: string, level: 'medium' | 'high' = 'medium') {
    this.add({ kind: 'warning', level, message })
  }

  private add(f: Finding) {
    if (this.seen.has(f.message)) return
    this.seen.add(f.message)
    this.list.push(f)
  }
}

/** Shannon entropy in bits per character: random tokens score above 4, words and identifiers well below. */
export function entropy(s: string): number {
  const counts = new Map<string, number>()
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1)
  let bits = 0
  for (const n of counts.values()) {
    const p = n / s.length
    bits -= p * Math.log2(p)
  }
  return bits
}

// Values people put where a credential goes in examples: never a leak.
const PLACEHOLDER = /your|example|sample|placeholder|changeme|change_me|dummy|redacted|xxxx|\*\*\*|<|>|\$\{|\{\{/i

/** A credential-looking value: long enough, varied enough, and not an obvious placeholder. */
export const looksLikeSecret = (value: string) =>
  value.length >= 12 && !/\s/.test(value) && !PLACEHOLDER.test(value) && !/^(.)\1+$/.test(value) && entropy(value) >= 3

/** Names under which a hard-coded value is a credential (`apiKey`, `GITHUB_TOKEN`, `password`, ...). */
export const SECRET_NAME = /(secret|token|api[_-]?key|apikey|passw(or)?d|pwd|private[_-]?key|access[_-]?key|auth[_-]?key|credential|bearer)/i
