// The options a program may carry and still be safe: one allowlist per program. An option not in its program's
// table makes the command dangerous ("option not known to be harmless"), so an option that runs a program or
// writes a file (`rg --pre`, `sort --compress-program`, `git log --output`, `tar --to-command`) is never allowed
// by omission. Abbreviated long options (`tar --to-c`, `sort --comp`, which getopt_long and git accept) are not
// in any table either. Option values and operands that name files are checked where they point.
import { checkRead, checkWrite } from '../effects'
import { DYNAMIC, NONEMPTY } from '../paths'
import type { Arg, Invocation } from '../scope'
import { quote } from '../verdict'

/** What an option's value is: free text, a file the program reads, or a file it writes. */
export type ValueKind = 'text' | 'read' | 'write'

interface OptionDef {
  /** undefined: the option takes no value. */
  kind?: ValueKind
  /** The value is optional and only ever attached (`--color[=WHEN]`, `sed -i[SUFFIX]`). */
  attached?: boolean
}

export interface OptionTable {
  /** Every option of the program was reviewed as harmless: any option passes (listed ones say which take values). */
  any: boolean
  /** Options end at the first operand (POSIX utilities, builtins, wrappers) instead of anywhere before `--`. */
  firstOperandEnds: boolean
  /** `-5` is a count (head -5, git log -3). */
  digits: boolean
  defs: Map<string, OptionDef>
  /** Whole words starting with one of these (`-O2`, `-Wall`, `-std=c11`). */
  prefixes: string[]
  /** Options are single-dash words, never clusters (Go's flag package: `-race`, `-o=x`). */
  singleDash: boolean
}

const KINDS: Record<string, ValueKind> = { '': 'text', r: 'read', w: 'write' }

/**
 * A table from a compact spec, words separated by spaces: `-a` a flag; `-n:` takes a value, `-f:r` a file it
 * reads, `-o:w` a file it writes; `-i=` an optional attached value; the same with `--long`; single-dash words
 * (`-name:`, `-ps`) match whole; `-O*` any word with that start; `-#` counts (`-5`); `*` every option is harmless.
 */
export function options(spec: string, flags: { firstOperandEnds?: boolean; singleDash?: boolean } = {}): OptionTable {
  const table: OptionTable = { any: false, firstOperandEnds: !!flags.firstOperandEnds, digits: false, defs: new Map(), prefixes: [], singleDash: !!flags.singleDash }
  for (const token of spec.split(/\s+/).filter(Boolean)) {
    if (token === '*') table.any = true
    else if (token === '-#') table.digits = true
    else if (token.endsWith('*')) table.prefixes.push(token.slice(0, -1))
    else {
      const m = /^(-{1,2}[^:=]+)(?:(:)([rw]?)|(=))?$/.exec(token)
      if (!m) throw new Error(`bad option spec ${token}`)
      table.defs.set(m[1], m[2] ? { kind: KINDS[m[3]] } : m[4] ? { kind: 'text', attached: true } : {})
    }
  }
  return table
}

/** An option as the command wrote it, with its value when it takes one. */
export interface Seen {
  name: string
  value?: Arg
}

export interface Parsed {
  operands: Arg[]
  seen: Seen[]
  /** True when one of these options was given (`-r`, `--recursive`). */
  has(...names: string[]): boolean
  /** The values given to these options. */
  values(...names: string[]): Arg[]
}

/**
 * A word whose text is only known at run time and could be an option: `$x`, `"$@"`, what xargs reads, `*.txt`,
 * and an option with a run-time part (`--pre=$x`, `-$x`).
 */
export function mayBeOption(a: Arg): boolean {
  if (a.operand) return false
  if (a.value === undefined) return a.shape === '' || a.shape.startsWith('-') || a.shape.startsWith(DYNAMIC) || a.shape.startsWith(NONEMPTY)
  return a.glob && /^[*?[]/.test(a.value)
}

/** The rest of an argument after `n` characters (an attached option value). */
function rest(a: Arg, n: number): Arg {
  return { ...a, value: a.value?.slice(n), shape: a.shape.slice(n) }
}

/**
 * Reads `args` against `table`: flags every option not in it and every word that may be one (unless all the
 * program's options are harmless), checks values that name files, and answers the operands.
 */
export function parseOptions(inv: Invocation, table: OptionTable, args: Arg[] = inv.args): Parsed {
  const operands: Arg[] = []
  const seen: Seen[] = []
  const unknown = (word: string) => inv.flag('dangerous', `option not known to be harmless (${quote(word, 32)})`)
  const take = (name: string, def: OptionDef | undefined, value: Arg | undefined) => {
    seen.push({ name, value })
    if (!value || !def?.kind || def.kind === 'text') return
    if (def.kind === 'read') checkRead(value, inv.scope, inv.flag)
    else checkWrite(value, inv.scope, inv.flag)
  }
  let ended = false
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    const v = a.value
    if (ended) {
      operands.push(a)
      continue
    }
    if (v === undefined || !v.startsWith('-') || v === '-') {
      if (mayBeOption(a) && !table.any) inv.flag('dangerous', `a word known only at run time may be an option (${quote(a.text, 32)})`)
      operands.push(a)
      if (table.firstOperandEnds) ended = true
      continue
    }
    if (v === '--') {
      ended = true
      continue
    }
    const eq = v.indexOf('=')
    // A whole word: a long option, a single-dash word (`-name`), or a prefix (`-O2`).
    const long = v.startsWith('--') || table.singleDash
    const head = long && eq > 0 ? v.slice(0, eq) : v
    const word = table.defs.get(head)
    if (word && (long || head.length > 2)) {
      if (word.kind === undefined) {
        if (eq > 0 && long) unknown(v)
        take(head, word, undefined)
      } else if (eq > 0 && long) take(head, word, rest(a, eq + 1))
      else if (word.attached) take(head, word, undefined)
      else take(head, word, args[++i])
      continue
    }
    if (table.prefixes.some((p) => v.startsWith(p))) {
      seen.push({ name: v })
      continue
    }
    if (long) {
      if (!table.any) unknown(v)
      continue
    }
    if (table.digits && /^-\d+$/.test(v)) {
      seen.push({ name: '-#' })
      continue
    }
    // A cluster of letters: each a flag, until one takes a value (the rest of the word, or the next word).
    for (let k = 1; k < v.length; k++) {
      const name = `-${v[k]}`
      const def = table.defs.get(name)
      if (!def) {
        if (!table.any) {
          unknown(k === 1 ? v : `${name} in ${v}`)
          break
        }
        continue
      }
      if (def.kind === undefined) {
        take(name, def, undefined)
        continue
      }
      if (k + 1 < v.length) take(name, def, rest(a, k + 1))
      else if (def.attached) take(name, def, undefined)
      else take(name, def, args[++i])
      break
    }
  }
  return {
    operands,
    seen,
    has: (...names) => seen.some((s) => names.includes(s.name)),
    values: (...names) => seen.filter((s) => names.includes(s.name) && s.value).map((s) => s.value as Arg),
  }
}
