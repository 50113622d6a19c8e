// Text processors that are read-only unless their program says otherwise: sed's `e`/`w`/`r` commands and
// `s///e`/`s///w` flags, awk's system()/pipes/print redirections/ENVIRON, jq's `env`. Programs are scanned in one
// linear pass (no regular expression with nested repetition over user input).
import { checkRead, checkWrite } from '../effects'
import type { Arg, Invocation } from '../scope'
import { quote } from '../verdict'
import { readArgs } from './basic'
import { options, parseOptions, type OptionTable } from './options'
import type { Rule } from './rule'

// Not listed: -f (a script file the classifier cannot read). `-i` writes the files it edits.
const SED = options(
  '-n --quiet --silent -e: --expression: -E -r --regexp-extended -s --separate -z --null-data -u --unbuffered -l: --line-length: ' +
    '--posix --debug --sandbox -i= --in-place= -b --binary --follow-symlinks',
)

const sed: Rule = (inv) => {
  const parsed = parseOptions(inv, SED)
  const expressions = parsed.values('-e', '--expression')
  const inPlace = parsed.seen.filter((o) => o.name === '-i' || o.name === '--in-place')
  // BSD sed reads `-i ''` as an empty backup suffix, GNU sed as an empty script: read the next word as a script too.
  const bsdSuffix = !expressions.length && inPlace.length && !inPlace.some((o) => o.value) && parsed.operands[0]?.value === ''
  const scripts = expressions.length ? expressions : parsed.operands.slice(0, bsdSuffix ? 2 : 1)
  const files = expressions.length ? parsed.operands : parsed.operands.slice(1)
  if (!scripts.length) return inv.flag('dangerous', 'runs a sed script it cannot read')
  for (const s of scripts) {
    if (s.value === undefined) return inv.flag('dangerous', 'runs a sed script known only at run time')
    if (!sedScriptIsPlain(s.value)) return inv.flag('dangerous', 'sed script runs commands or touches other files (e, w, r)')
  }
  // A backup suffix with `/` or `*` names another directory (`-i'/home/u/.ssh/*'` writes a copy there).
  const suffix = inPlace.find((o) => o.value && (o.value.value === undefined || /[/*]/.test(o.value.value)))
  if (suffix) return inv.flag('dangerous', `backup suffix writes elsewhere (${quote(suffix.value?.text ?? '', 32)})`)
  for (const f of files) (inPlace.length ? checkWrite : checkRead)(f, inv.scope, inv.flag)
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

// gawk -f/-i/-l/-E load program files or extensions, -d/-o/-p write files, mawk -W exec runs a file: not listed.
const AWK = options(
  '-F: -v: -e: --source: --field-separator: --assign: -S --sandbox -b --characters-as-bytes -c --traditional -P --posix -r ' +
    '--re-interval -N --use-lc-numeric -n --non-decimal-data -M --bignum -s --no-optimize -O --optimize',
)

const awk: Rule = (inv) => {
  const parsed = parseOptions(inv, AWK)
  const sources = parsed.values('-e', '--source')
  const programs = sources.length ? sources : parsed.operands.slice(0, 1)
  const files = sources.length ? parsed.operands : parsed.operands.slice(1)
  if (!programs.length) return inv.flag('dangerous', 'runs an awk program it cannot read')
  for (const program of programs) {
    if (program.value === undefined) return inv.flag('dangerous', 'runs an awk program known only at run time')
    const why = awkEffect(program.value)
    if (why) return inv.flag('dangerous', why)
  }
  readArgs(inv, files.filter((f) => !/^[A-Za-z_]\w*=/.test(f.value ?? '')))
  inv.allow()
}

/** What makes an awk program more than a filter, if anything. */
export function awkEffect(program: string): string | undefined {
  if (/\bsystem\s*\(/.test(program)) return 'awk program runs commands (system)'
  if (/@\s*(include|load|namespace)\b/.test(program)) return 'awk program loads other files or extensions (@include, @load)'
  if (/\bENVIRON\b/.test(program)) return 'awk program reads the environment'
  if (/\bgetline\b/.test(program)) return 'awk program reads other files or commands (getline)'
  if (/(^|[^|])\|(?!\|)/.test(program)) return 'awk program pipes to a command'
  for (const statement of program.split(/[;{}\n]/)) {
    const m = /\bprintf?\b/.exec(statement)
    if (m && statement.indexOf('>', m.index) >= 0) return 'awk program writes files'
  }
  return undefined
}

// jq -f/--from-file reads a filter the classifier cannot check for `env`: not listed.
const JQ = options(
  '-r -j -a -c -n -e -s -S -C -M -R -h -V -0 --raw-output --raw-output0 --join-output --ascii-output --compact-output --null-input ' +
    '--exit-status --slurp --sort-keys --color-output --monochrome-output --raw-input --tab --indent: --seq --stream --stream-errors ' +
    '--unbuffered --args --jsonargs -L: --help --version --build-configuration',
)
// yq (mikefarah and kislyuk): -s/--split-exp writes files named by an expression: not listed.
const YQ = options(
  '-i --inplace -o: --output-format: -p: --input-format: -r --unwrapScalar= -e --exit-status -n --null-input -P --prettyPrint ' +
    '-I: --indent: -C --colors -M --no-colors -N --no-doc -0 --nul-output -y -Y --yaml-output --yaml-roundtrip -c -j -S --tab --arg --argjson',
)

/** jq / yq: the environment is reachable through `env`, `$ENV`, yq's `strenv`/`load`; modules load other files. */
function query(table: OptionTable, inPlaceFlag: boolean): Rule {
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
    const parsed = parseOptions(inv, table, args)
    let ops = parsed.operands
    if (inPlaceFlag && /^(eval|e|eval-all|ea)$/.test(ops[0]?.value ?? '')) ops = ops.slice(1)
    const [filter, ...files] = ops
    if (filter && filter.value === undefined) return inv.flag('dangerous', 'runs a filter known only at run time')
    if (filter?.value && /(^|[^.\w$])(env|strenv|envsubst|load\w*)\b|\$ENV\b|\$__prog|\b(import|include)\s/.test(filter.value)) return inv.flag('dangerous', 'filter reads the environment or other files')
    readArgs(inv, [...dataFiles, ...files])
    if (inPlaceFlag && parsed.has('-i', '--inplace')) files.forEach((f) => checkWrite(f, inv.scope, inv.flag))
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
  jq: query(JQ, false),
  gojq: query(JQ, false),
  yq: query(YQ, true),
}
