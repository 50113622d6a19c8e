// Words into arguments, expanded as far as the classifier can know: quotes removed, escapes applied, variables the
// script assigned substituted, `$IFS` splitting fields, `$(…)` whose output is known (`$(echo rm)`) substituted,
// braces expanded. Anything else is kept as a marker, so path checks still see the literal parts around it.
import type { Assignment, ParsedScript, Word, WordPart } from 'unbash'
import { DYNAMIC, NONEMPTY } from './paths'
import { LIMITS, type Arg, type Scope } from './scope'

/** Computes what a command substitution prints when it is known (`$(echo x)`), else undefined. */
export type OutputOf = (script: ParsedScript, scope: Scope) => string | undefined

interface Piece {
  value: string | undefined
  shape: string
  glob?: boolean
  /** An unquoted expansion: its value is split into fields. */
  split?: boolean
  expanded?: boolean
  /** Quoted or literal text: makes a field even when empty (`""`). */
  solid?: boolean
  process?: ParsedScript
}

interface Field {
  value: string | undefined
  shape: string
  glob: boolean
  expanded: boolean
  solid: boolean
  process?: ParsedScript
}

const IFS_WHITESPACE = /[ \t\n]+/

/** The arguments one word becomes (none, one, or several after splitting and brace expansion). */
export function expandWord(word: Word, scope: Scope, outputOf: OutputOf): Arg[] {
  const parts = word.parts
  if (!parts) return [{ value: word.value, shape: word.value, glob: false, expanded: false, text: word.text }]
  if (parts.some((p) => p.type === 'BraceExpansion')) return expandBraceWord(word, parts, scope, outputOf)
  const fields: Field[] = [newField()]
  for (const part of parts) {
    // Past the bound the rest of the word is unknown (and not computed).
    if (fields.length >= LIMITS.fields) {
      append(fields, { value: undefined, shape: DYNAMIC, expanded: true })
      break
    }
    for (const piece of pieces(part, scope, outputOf, false)) append(fields, piece)
  }
  return fields
    .filter((f) => f.solid || f.value !== '' || f.shape !== '')
    .slice(0, LIMITS.fields)
    .map((f) => ({ value: f.value, shape: f.shape, glob: f.glob, expanded: f.expanded, text: word.text, process: f.process }))
}

/** An assignment word (`export X=1`) as one argument, `NAME=value`. */
export function expandAssignment(a: Assignment, scope: Scope, outputOf: OutputOf): Arg {
  const head = `${a.name}${a.append ? '+=' : '='}`
  if (a.value.type !== 'Word' || a.index) return { value: undefined, shape: head + DYNAMIC, glob: false, expanded: true, text: a.text }
  const v = assignedValue(a.value, scope, outputOf)
  return { value: v.value === undefined ? undefined : head + v.value, shape: head + v.shape, glob: false, expanded: v.expanded, text: a.text }
}

/** The value an assignment stores: no field splitting, no globbing. */
export function assignedValue(word: Word, scope: Scope, outputOf: OutputOf): { value: string | undefined; shape: string; expanded: boolean } {
  if (!word.parts) return { value: word.value, shape: word.value, expanded: false }
  let value: string | undefined = ''
  let shape = ''
  let expanded = false
  for (const part of word.parts)
    for (const p of pieces(part, scope, outputOf, true)) {
      value = value === undefined || p.value === undefined ? undefined : capped(value + p.value)
      shape = capped(shape + p.shape) ?? DYNAMIC
      expanded ||= !!p.expanded
    }
  return { value, shape, expanded }
}

/** A computed value past the bound is unknown: no input can make the classifier build huge strings. */
export function capped(value: string): string | undefined {
  return value.length > LIMITS.valueChars ? undefined : value
}

function newField(): Field {
  return { value: '', shape: '', glob: false, expanded: false, solid: false }
}

function append(fields: Field[], piece: Piece) {
  let field = fields[fields.length - 1]
  const add = (value: string | undefined, shape: string) => {
    field.value = field.value === undefined || value === undefined ? undefined : capped(field.value + value)
    field.shape = capped(field.shape + shape) ?? DYNAMIC
    field.glob ||= !!piece.glob
    field.expanded ||= !!piece.expanded
    field.solid ||= !!piece.solid
    if (piece.process) field.process = piece.process
  }
  if (!piece.split || piece.value === undefined || !IFS_WHITESPACE.test(piece.value)) return add(piece.value, piece.shape)
  const tokens = piece.value.split(IFS_WHITESPACE)
  add(tokens[0], tokens[0])
  for (const token of tokens.slice(1)) {
    if (fields.length >= LIMITS.fields) break
    field = newField()
    field.expanded = true
    fields.push(field)
    add(token, token)
  }
}

/** What one word part contributes. `quoted`: inside double quotes (no splitting, no globbing). */
function pieces(part: WordPart, scope: Scope, outputOf: OutputOf, quoted: boolean): Piece[] {
  switch (part.type) {
    case 'Literal':
      return [{ value: part.value, shape: part.value, solid: true }]
    case 'SingleQuoted':
    case 'AnsiCQuoted':
      return [{ value: part.value, shape: part.value, solid: true }]
    case 'DoubleQuoted':
    case 'LocaleString':
      return [{ ...join(part.parts.flatMap((p) => pieces(p, scope, outputOf, true))), solid: true }]
    case 'Glob':
    case 'ExtendedGlob':
      return [{ value: part.text, shape: part.text, glob: !quoted, solid: true }]
    case 'BraceExpansion':
      return [{ value: part.text, shape: part.text, solid: true }]
    case 'SimpleExpansion':
      return [variable(part.text.slice(1), undefined, scope, quoted)]
    case 'ParameterExpansion':
      return [variable(part.parameter, part, scope, quoted)]
    case 'CommandExpansion': {
      const out = part.script ? outputOf(part.script, scope) : undefined
      if (out === undefined) return [{ value: undefined, shape: DYNAMIC, expanded: true }]
      const value = out.replace(/\n+$/, '')
      return [{ value, shape: value, split: !quoted, expanded: true }]
    }
    case 'ProcessSubstitution':
      return [{ value: '/dev/fd/63', shape: '/dev/fd/63', expanded: true, solid: true, process: part.script }]
    case 'ArithmeticExpansion':
      return [{ value: undefined, shape: DYNAMIC, expanded: true }]
  }
}

function join(ps: Piece[]): Piece {
  let value: string | undefined = ''
  let shape = ''
  let expanded = false
  for (const p of ps) {
    value = value === undefined || p.value === undefined ? undefined : capped(value + p.value)
    shape = capped(shape + p.shape) ?? DYNAMIC
    expanded ||= !!p.expanded
  }
  return { value, shape, expanded }
}

/** `$name` / `${name…}`: a value the script assigned, `~` for HOME, else a marker. */
function variable(name: string, part: Extract<WordPart, { type: 'ParameterExpansion' }> | undefined, scope: Scope, quoted: boolean): Piece {
  const op = part?.operation
  const known = part?.prefix ? undefined : scope.vars.get(name)
  if (typeof known === 'string' && (!op || (op.type === 'Default' && known !== ''))) {
    // Splitting by a changed IFS is beyond the classifier: the value is then unknown.
    if (!quoted && scope.vars.has('IFS')) return { value: undefined, shape: DYNAMIC, expanded: true }
    return { value: known, shape: known, split: !quoted, expanded: true }
  }
  if (known === undefined && !part?.prefix) {
    if (name === 'IFS' && !op) return { value: quoted ? ' ' : ' \t\n', shape: ' ', split: !quoted, expanded: true }
    if (name === 'HOME' && (!op || op.operator === ':?' || op.operator === '?')) return { value: undefined, shape: '~', expanded: true }
  }
  const nonEmpty = op?.operator === ':?' || op?.operator === '?' || (op?.type === 'Default' && /^:?[-=]$/.test(op.operator) && op.operand.text !== '')
  return { value: undefined, shape: nonEmpty ? NONEMPTY : DYNAMIC, expanded: true }
}

/** A word with `{a,b}` or `{1..3}`: one argument per alternative (bounded); unknown alternatives stay markers. */
function expandBraceWord(word: Word, parts: readonly WordPart[], scope: Scope, outputOf: OutputOf): Arg[] {
  type Combo = { value: string | undefined; shape: string; glob: boolean }
  const concat = (a: Combo, b: Combo): Combo => ({ value: a.value === undefined || b.value === undefined ? undefined : capped(a.value + b.value), shape: capped(a.shape + b.shape) ?? DYNAMIC, glob: a.glob || b.glob })
  let combos: Combo[] = [{ value: '', shape: '', glob: false }]
  for (const part of parts) {
    const alternatives: Combo[] =
      part.type === 'BraceExpansion'
        ? (braceAlternatives(part.text)?.map((v) => ({ value: v, shape: v, glob: false })) ?? [{ value: undefined, shape: DYNAMIC, glob: false }])
        : [pieces(part, scope, outputOf, false).map((p) => ({ value: p.value, shape: p.shape, glob: !!p.glob })).reduce(concat, { value: '', shape: '', glob: false })]
    if (combos.length * alternatives.length > LIMITS.fields) return [{ value: undefined, shape: DYNAMIC, glob: false, expanded: true, text: word.text }]
    combos = combos.flatMap((c) => alternatives.map((a) => concat(c, a)))
  }
  return combos.map((c) => ({ ...c, expanded: true, text: word.text }))
}

/** Bash brace expansion of literal text (`{a,b{c,d}}`, `{1..3}`, `{a..c}`); undefined for anything else or too many. */
export function braceAlternatives(text: string): string[] | undefined {
  if (/[$`'"\\]/.test(text)) return undefined
  const out = expand(text)
  return out && out.length <= LIMITS.fields ? out : undefined
}

function expand(s: string): string[] | undefined {
  for (let i = s.indexOf('{'); i >= 0; i = s.indexOf('{', i + 1)) {
    let depth = 0
    const commas: number[] = []
    let j = i
    for (; j < s.length; j++) {
      if (s[j] === '{') depth++
      else if (s[j] === '}' && --depth === 0) break
      else if (s[j] === ',' && depth === 1) commas.push(j)
    }
    if (j >= s.length) return [s]
    const body = s.slice(i + 1, j)
    let alternatives: string[] | undefined
    if (commas.length) {
      const bounds = [i, ...commas, j]
      alternatives = []
      for (let k = 0; k < bounds.length - 1; k++) {
        const inner = expand(s.slice(bounds[k] + 1, bounds[k + 1]))
        if (!inner) return undefined
        alternatives.push(...inner)
      }
    } else if (SEQUENCE.test(body)) {
      // A sequence too long to list is unknown, not the literal text.
      alternatives = sequence(body)
      if (!alternatives) return undefined
    }
    if (!alternatives) continue
    const rest = expand(s.slice(j + 1))
    if (!rest || alternatives.length * rest.length > LIMITS.fields) return undefined
    const head = s.slice(0, i)
    return alternatives.flatMap((a) => rest.map((r) => head + a + r))
  }
  return [s]
}

const SEQUENCE = /^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.(-?\d+))?$/

function sequence(body: string): string[] | undefined {
  const m = SEQUENCE.exec(body)
  if (!m) return undefined
  const numeric = /\d/.test(m[1])
  if (numeric !== /\d/.test(m[2])) return undefined
  const from = numeric ? Number(m[1]) : m[1].charCodeAt(0)
  const to = numeric ? Number(m[2]) : m[2].charCodeAt(0)
  const step = Math.abs(Number(m[3] ?? 1)) || 1
  if (Math.abs(to - from) / step >= LIMITS.fields) return undefined
  const out: string[] = []
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) out.push(numeric ? String(v) : String.fromCharCode(v))
  return out
}
