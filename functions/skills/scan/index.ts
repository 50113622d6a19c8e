import { Findings } from './findings'
import type { Scan } from './object'
import { parseProgram, scanProgram } from './js'
import { scanCommonText, scanJsLikeText, scanShellText, scanUnparsedCode } from './text'

export interface ScanInput {
  code?: string | null
  description?: string | null
  sourceUrl?: string | null
}

/**
 * Static analysis of a skill: nothing is fetched or run. The code is parsed as JavaScript, then TypeScript
 * (functions/skills/scan/js.ts); what does not parse (a shell script, Markdown instructions, broken code) is read as
 * text with the shell rules and the JavaScript constructs spotted as text; fenced ```js/```ts blocks of
 * Markdown are parsed on their own; text that does not parse and still names a way to load modules or reach
 * globals (`require(`, `import(`, `process.`, `globalThis[`, `.constructor`...) is blocked: nothing in it can be
 * resolved. Every text (code and description) also gets the common rules: credentials,
 * raw-IP URLs, encoded blobs, escape runs. Then the tier:
 *
 * | Found | trustTier | riskLevel | installAllowed | requiresManualReview |
 * |---|---|---|---|---|
 * | any reason | `blocked` | `blocked` | false | false (no review makes it installable) |
 * | a high warning | `review` | `high` | true | true |
 * | warnings | `review` | `medium` | true | true |
 * | nothing, `sourceUrl` https on a host name | `verified` | `low` | true | false |
 * | nothing, no usable `sourceUrl` | `review` | `low` | true | false: nothing was found, only its origin is unknown |
 *
 * `trusted` is never the scanner's answer: it is reserved for the platform's own skills (functions/skills/catalog.ts),
 * whatever a caller says of its author or of being featured.
 */
export function scanSkill(input: ScanInput): Scan {
  const f = new Findings()
  const code = input.code?.trim() ?? ''
  if (code) {
    const program = parseProgram(code)
    if (program) scanProgram(program, f)
    else {
      scanShellText(code, f)
      scanJsLikeText(code, f)
      // Fenced blocks that parse are judged on their tree. Code that does not (of a Markdown text, only its fenced
      // blocks: prose is not run) and names a capability cannot be resolved.
      let unparsedBlocks = ''
      for (const [, , body] of code.matchAll(JS_FENCE)) {
        const parsed = parseProgram(body)
        if (parsed) scanProgram(parsed, f)
        else unparsedBlocks += `${body}\n`
      }
      const markdown = /^#{1,6}\s|^```/m.test(code)
      scanUnparsedCode(markdown ? unparsedBlocks : code, f)
    }
    scanCommonText(code, f)
  }
  if (input.description) {
    scanShellText(input.description, f)
    scanCommonText(input.description, f)
  }
  const source = sourceUrlFinding(input.sourceUrl)
  if (source) f.warning(source, source.includes('raw IP') ? 'high' : 'medium')

  const reasons = f.list.filter((x) => x.kind === 'reason').map((x) => x.message)
  const warnings = f.list.filter((x) => x.kind === 'warning').map((x) => x.message)
  if (reasons.length) return { trustTier: 'blocked', riskLevel: 'blocked', installAllowed: false, reasons, warnings, requiresManualReview: false }
  if (warnings.length) {
    const high = f.list.some((x) => x.kind === 'warning' && x.level === 'high')
    return { trustTier: 'review', riskLevel: high ? 'high' : 'medium', installAllowed: true, reasons, warnings, requiresManualReview: true }
  }
  return { trustTier: 'review', riskLevel: 'low', installAllowed: true, reasons, warnings, requiresManualReview: false }
}

// A Markdown text's fenced code blocks that may be JavaScript (tagged so, or untagged).
const JS_FENCE = /```[ \t]*(js|javascript|mjs|cjs|ts|typescript|node|jsx|tsx)?[^\n]*\n([\s\S]*?)```/gi

/** Why `sourceUrl` does not vouch for the skill, or null when it does (https on a public host name). */
function sourceUrlFinding(raw: string | null | undefined): string | null {
  const value = raw?.trim()
  if (!value) return null
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'sourceUrl is not a valid URL'
  }
  if (url.protocol !== 'https:') return 'sourceUrl is not https'
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':')) return 'sourceUrl points at a raw IP address'
  if (!host.includes('.') || host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    return 'sourceUrl is not on a public host name'
  }
  if (url.username || url.password) return 'sourceUrl carries credentials'
  return null
}
