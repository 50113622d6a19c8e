// Text processors that are read-only unless their program says otherwise: sed's `e`/`w`/`r` commands and
// `s///e`/`s///w` flags, awk's system()/pipes/print redirections/ENVIRON, jq's `env`. Programs are scanned in one
// linear pass (no regular expression with nested repetition over user input).
import { checkRead, checkWrite } from '../effects'
import type { Arg, Invocation } from '../scope'
import { hasFlag, operands, optionValues } from './args'
import { readArgs } from './basic'
import type { Rule } from './rule'

const SED_VALUED = ['-e', '-f', '-l', '--expression', '--file', '--line-length']

const sed: Rule = (inv) => {
  if (optionValues(inv.args, ['-f', '--file']).length) return inv.flag('dangerous', 'runs a sed script file')
  const expressions = optionValues(inv.args, ['-e', '--expression'])
  const ops = operands(inv.args, { valued: SED_VALUED })
  const scripts = expressions.length ? expressions : ops.slice(0, 1)
  const files = expressions.length ? ops : ops.slice(1)
  for (const s of scripts) {
    if (s.value === undefined) return inv.flag('dangerous', 'runs a sed script known only at run time')
    if (!sedScriptIsPlain(s.value)) return inv.flag('dangerous', 'sed script runs commands or touches other files (e, w, r)')
  }
  const inPlace = inv.args.some((a) => a.value !== undefined && (/^-[a-zA-Z]*i/.test(a.value) || a.value.startsWith('--in-place')))
  for (const f of files) (inPlace ? checkWrite : checkRead)(f, inv.scope, inv.flag)
  inv.allow()
}

/** True when a sed script only edits the stream: no e/w/W/r/R commands, no e or w flag on s. */
export function sedScriptIsPlain(script: string): boolean {
  const n = script.length
  let i = 0
  const until = (d: string) => {
    for (; i < n && script[i] !== d; i++) if (script[i] === '\\') i++
    return i++ < n
  }
  const address = () => {
    if (/[0-9]/.test(script[i])) while (i < n && /[0-9~]/.test(script[i])) i++
    else if (script[i] === '$') i++
    else if (script[i] === '/') {
      i++
      if (!until('/')) return false
      while (i < n && /[IM]/.test(script[i])) i++
    } else if (script[i] === '\\') {
      const d = script[i + 1]
      i += 2
      if (!d || !until(d)) return false
    }
    return true
  }
  const skip = (chars: RegExp) => {
    while (i < n && chars.test(script[i])) i++
  }
  for (;;) {
    skip(/[\s;}]/)
    if (i >= n) return true
    if (script[i] === '#') {
      while (i < n && script[i] !== '\n') i++
      continue
    }
    if (!address()) return false
    skip(/[ \t]/)
    if (script[i] === ',') {
      i++
      skip(/[ \t]/)
      if (script[i] === '+' || script[i] === '~') i++
      if (!address()) return false
    }
    skip(/[ \t!]/)
    const c = script[i++]
    if (c === '{') continue
    if (c === 's' || c === 'y') {
      const d = script[i++]
      if (!d || d === '\n' || d === '\\' || !until(d) || !until(d)) return false
      if (c === 's') {
        const start = i
        while (i < n && /[a-zA-Z0-9]/.test(script[i])) i++
        if (/[ewEW]/.test(script.slice(start, i).replace(/[gpiImM0-9]/g, ''))) return false
      }
    } else if (c && 'aic'.includes(c)) {
      // Text to the end of the line; `\` at the end continues it.
      while (i < n && script[i] !== '\n') i += script[i] === '\\' ? 2 : 1
    } else if (c === 'b' || c === 't' || c === 'T' || c === ':') {
      while (i < n && script[i] !== '\n' && script[i] !== ';') i++
    } else if (c === 'q' || c === 'Q' || c === 'l' || c === 'L') {
      skip(/[ \t0-9]/)
    } else if (!c || !'pdDnNgGhHxPz=F'.includes(c)) return false
  }
}

const AWK_VALUED = ['-F', '-v', '-f', '--field-separator', '--assign', '--file', '-i', '--include']

const awk: Rule = (inv) => {
  if (optionValues(inv.args, ['-f', '--file', '-i', '--include']).length) return inv.flag('dangerous', 'runs an awk program file')
  const [program, ...files] = operands(inv.args, { valued: AWK_VALUED })
  if (!program) return inv.allow()
  if (program.value === undefined) return inv.flag('dangerous', 'runs an awk program known only at run time')
  const why = awkEffect(program.value)
  if (why) return inv.flag('dangerous', why)
  readArgs(inv, files.filter((f) => !/^[A-Za-z_]\w*=/.test(f.value ?? '')))
  inv.allow()
}

/** What makes an awk program more than a filter, if anything. */
export function awkEffect(program: string): string | undefined {
  if (/\bsystem\s*\(/.test(program)) return 'awk program runs commands (system)'
  if (/\bENVIRON\b/.test(program)) return 'awk program reads the environment'
  if (/\bgetline\b/.test(program)) return 'awk program reads other files or commands (getline)'
  if (/(^|[^|])\|(?!\|)/.test(program)) return 'awk program pipes to a command'
  for (const statement of program.split(/[;{}\n]/)) {
    const m = /\bprintf?\b/.exec(statement)
    if (m && statement.indexOf('>', m.index) >= 0) return 'awk program writes files'
  }
  return undefined
}

/** jq / yq: the environment is reachable through `env` and `$ENV`; yq -i writes its files. */
function query(inPlaceFlag: boolean): Rule {
  return (inv: Invocation) => {
    // --arg/--argjson NAME VALUE and --slurpfile/--rawfile NAME FILE take two words.
    const args = [...inv.args]
    const dataFiles: Arg[] = []
    for (let k = 0; k < args.length; k++) {
      const v = args[k].value
      if (v !== '--arg' && v !== '--argjson' && v !== '--slurpfile' && v !== '--rawfile') continue
      if (v === '--slurpfile' || v === '--rawfile') dataFiles.push(...args.slice(k + 2, k + 3))
      args.splice(k--, 3)
    }
    const fromFile = optionValues(args, ['-f', '--from-file'])
    const ops = operands(args, { valued: ['-f', '--from-file', '--indent', '-L', '--output-format', '-o', '--input-format', '-p'] })
    const filter = fromFile.length ? undefined : ops[0]
    const files = fromFile.length ? ops : ops.slice(1)
    if (filter && filter.value === undefined) return inv.flag('dangerous', 'runs a filter known only at run time')
    if (filter?.value && /(^|[^.\w$])env\b|\$ENV\b|\$__prog/.test(filter.value)) return inv.flag('dangerous', 'filter reads the environment')
    readArgs(inv, [...fromFile, ...dataFiles, ...files])
    if (inPlaceFlag && hasFlag(args, 'i', ['--inplace'])) files.forEach((f) => checkWrite(f, inv.scope, inv.flag))
    inv.allow()
  }
}

export const textRules: Record<string, Rule> = {
  sed,
  gsed: sed,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
  jq: query(false),
  gojq: query(false),
  yq: query(true),
}
