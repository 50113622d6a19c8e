import type { ParsedScript } from 'unbash'
import type { Cwd } from './paths'
import { quote, stricter, type ToolClassification, type ToolTier } from './verdict'

/** Bounds that keep one classification fast whatever the input (every step is linear in what it reads). */
export const LIMITS = {
  /** A longer command is dangerous without parsing. */
  commandChars: 10_000,
  /** Strings run again as scripts (`bash -c`, `eval`, a shell's input…) inside one another. */
  depth: 4,
  /** AST nodes visited, all levels together. */
  steps: 50_000,
  /** Characters parsed, all levels together (re-parsed strings included). */
  parsedChars: 60_000,
  /** Words one brace expansion or field splitting may produce. */
  fields: 64,
  /** Characters of a value the classifier computes (a variable, a word, a command's output); longer is unknown. */
  valueChars: 10_000,
  /**
   * Substitutions (`$(`, backticks, `<(`, `>(`) in one command: more is dangerous unparsed (the parser's cost
   * grows with their nesting, and no ordinary command needs that many).
   */
  substitutions: 128,
}

/** Thrown when a bound is crossed; the classification answers dangerous. */
export class TooComplex extends Error {}

/** What a command reads on its standard input, as far as the classifier can tell. */
export type Stream =
  | { kind: 'none' } // nothing piped or redirected
  | { kind: 'text'; text: string } // known text: `echo …`, a here-document, `base64 -d` of known text
  | { kind: 'network' } // what curl, wget, nc… fetched
  | { kind: 'unknown' }

export const NO_INPUT: Stream = { kind: 'none' }
export const UNKNOWN: Stream = { kind: 'unknown' }

/** One word of a command after the expansions the classifier can know. */
export interface Arg {
  /** After quote removal and known expansions; undefined when part of it is only known at run time. */
  value: string | undefined
  /** The same with run-time parts as DYNAMIC/NONEMPTY markers and `$HOME` as `~`: what path checks look at. */
  shape: string
  /** Holds unquoted glob characters. */
  glob: boolean
  /** Part of it came from an expansion (a variable, a substitution, a brace, a split). */
  expanded: boolean
  /** The source text, for reasons. */
  text: string
  /** A process substitution `<(…)`: the script whose output this path is. */
  process?: ParsedScript
  /** Known not to be an option although its text is only known at run time (find's `{}`: a path under a start directory). */
  operand?: boolean
}

/** A literal argument made by the classifier (a wrapper's default command, xargs input). */
export function literalArg(value: string): Arg {
  return { value, shape: value, glob: false, expanded: false, text: value }
}

/** An argument only known at run time (`{}` of find -exec, what xargs reads). */
export function unknownArg(text: string): Arg {
  return { value: undefined, shape: '\u0000', glob: false, expanded: true, text }
}

/** The strictest tier met so far and the part that decided it; the names of the commands allowed. */
export class Verdict {
  tier: ToolTier = 'safe'
  reason = ''
  readonly allowed = new Set<string>()
  steps = 0
  parsedChars = 0
  /** What each substitution's script prints, computed once per classification. */
  readonly outputs = new Map<object, Stream>()
  private decisive = false

  /**
   * Keeps the strictest tier and the reason of the first part that reached it; a `decisive` reason (running
   * fetched code) replaces a plain one of the same tier (the curl it comes from).
   */
  flag(tier: ToolTier, reason: string, decisive = false) {
    if (stricter(tier, this.tier) || (tier === this.tier && tier !== 'safe' && decisive && !this.decisive)) {
      this.tier = tier
      this.reason = reason
      this.decisive = decisive
    }
  }

  result(): ToolClassification {
    if (this.tier !== 'safe') return { tier: this.tier, reason: this.reason }
    const names = [...this.allowed]
    return { tier: 'safe', reason: names.length ? `Allowed: ${quote(names.join(', '), 80)}` : 'Nothing to run' }
  }
}

/** What a part of the script runs in: the shell state the classifier tracks. Subshells get a copy. */
export interface Scope {
  verdict: Verdict
  /** Strings re-parsed as scripts around this one. */
  depth: number
  cwd: Cwd
  /** Variables assigned in the script: their value, or null once assigned something unknown. */
  vars: Map<string, string | null>
  /** Functions defined in the script (their bodies are classified where defined): whether calling one changes directory. */
  functions: Map<string, boolean>
}

export function childScope(scope: Scope): Scope {
  return { ...scope, vars: new Map(scope.vars), functions: new Map(scope.functions) }
}

/** One simple command being classified, handed to its rule (functions/permissions/hooks/commands). */
export interface Invocation {
  /** Lowercased, without its directory. */
  name: string
  args: Arg[]
  stdin: Stream
  scope: Scope
  /** Notes a tier; the reason is prefixed with the command's name (`decisive`: see Verdict.flag). */
  flag(tier: ToolTier, why: string, decisive?: boolean): void
  /** Marks the command allowed (named in a safe result's reason). */
  allow(): void
  /** Classifies another command this one runs (a wrapper's payload, find -exec, xargs). */
  run(argv: Arg[], stdin?: Stream): void
  /**
   * Classifies a string this command runs as a script (`bash -c`, `eval`, a shell's input), one level deeper;
   * `sameShell` (eval, source): its directory changes and variables carry on.
   */
  runScript(text: string, sameShell?: boolean): void
  /** What a script (a process substitution's) prints, as far as the classifier can tell. */
  streamOf(script: ParsedScript): Stream
}
