// The shell's own builtins (and what bash runs as one: printf, test): what they store, where they move, what they
// evaluate. Reading and assigning variables can change what later commands run (PATH, LD_PRELOAD, PROMPT_COMMAND).
import { DYNAMIC, resolvePath } from '../paths'
import type { Arg, Invocation } from '../scope'
import { CODE_VARIABLES, riskyVariable } from '../variables'
import { quote } from '../verdict'
import { subscriptRisk, textRisk } from '../arithmetic'
import { readArgs, reads } from './basic'
import { options, parseOptions, type OptionTable } from './options'
import type { Rule } from './rule'

// declare -n makes a name reference (assigning through it reaches any variable): not in the table.
const DECLARE = options('-a -A -f -F -g -i -I -l -p -r -t -u -x')

export const builtinRules: Record<string, Rule> = {
  test: testCommand,
  '[': testCommand,
  cd: (inv) => changeDirectory(inv),
  pushd: (inv) => changeDirectory(inv),
  popd: (inv) => {
    inv.scope.cwd = null
    inv.allow()
  },
  printf: (inv) => {
    const parsed = parseOptions(inv, options('-v:', { firstOperandEnds: true }))
    for (const name of parsed.values('-v')) assignsName(inv, name)
    inv.allow()
  },
  read: (inv) => {
    const parsed = parseOptions(inv, options('-r -s -e -a: -d: -i: -n: -N: -p: -t: -u:'))
    for (const a of [...parsed.values('-a'), ...parsed.operands]) assignsName(inv, a)
    inv.allow()
  },
  // mapfile -C runs a callback: not in the table.
  mapfile: arrayReader,
  readarray: arrayReader,
  getopts: (inv) => {
    const [, name] = parseOptions(inv, options('*')).operands
    if (name) assignsName(inv, name)
    inv.allow()
  },
  // `hash -p path name` makes `name` run `path`.
  hash: reads(options('-r -l -t -d'), false),
  let: (inv) => {
    for (const a of inv.args) {
      const risk = a.value === undefined ? 'evaluates an expression known only at run time' : textRisk(a.value, inv.scope)
      if (risk) return inv.flag('dangerous', risk)
    }
    inv.allow()
  },
  unset: (inv) => {
    for (const a of parseOptions(inv, options('-f -v -n')).operands) {
      const risk = a.value === undefined ? 'unsets a variable named at run time' : subscriptRisk(a.value)
      if (risk) return inv.flag('dangerous', risk)
      inv.scope.vars.set(a.value as string, '')
    }
    inv.allow()
  },
  export: declare(options('-f -n -p')),
  declare: declare(DECLARE),
  typeset: declare(DECLARE),
  local: declare(DECLARE),
  readonly: declare(options('-a -A -f -p')),
  set,
  alias: (inv) => (inv.args.some((a) => a.value !== '-p') ? inv.flag('dangerous', 'defines an alias (changes what a name runs)') : inv.allow()),
  trap: (inv) => {
    const parsed = parseOptions(inv, options('-l -p -P'))
    const [action] = parsed.operands
    // `trap - EXIT` and `trap '' INT` reset or ignore: nothing runs.
    if (action && action.value !== '-' && action.value !== '' && !parsed.has('-l', '-p', '-P')) {
      if (action.value === undefined) return inv.flag('dangerous', 'sets a trap known only at run time')
      inv.runScript(action.value)
    }
    inv.allow()
  },
}

/** test / `[`: `-v 'a[$(id)]'` evaluates the subscript; `-eq` and friends compare integers without evaluating. */
function testCommand(inv: Invocation) {
  for (let i = 0; i < inv.args.length - 1; i++) {
    if (inv.args[i].value !== '-v') continue
    const name = inv.args[i + 1].value
    const risk = name === undefined ? 'tests a variable named at run time' : subscriptRisk(name)
    if (risk) return inv.flag('dangerous', risk)
  }
  inv.allow()
}

/** A builtin storing into a variable it names (`read NAME`, `printf -v NAME`): PATH, LD_PRELOAD… change what runs. */
function assignsName(inv: Invocation, name: Arg) {
  const v = name.value
  if (v === undefined) return inv.flag('dangerous', 'assigns a variable named at run time')
  const subscript = subscriptRisk(v)
  if (subscript) return inv.flag('dangerous', subscript)
  const bare = v.replace(/\[.*$/, '')
  if (riskyVariable(bare)) inv.flag('dangerous', `sets ${quote(bare, 32)}, which changes what runs`)
  inv.scope.vars.set(bare, null)
}

function arrayReader(inv: Invocation) {
  const { operands } = parseOptions(inv, options('-t -d: -n: -O: -s: -u: -c:'))
  if (operands.length) assignsName(inv, operands[operands.length - 1])
  inv.allow()
}

/** `cd dir`: later relative paths resolve there; a directory known only at run time leaves it unknown. */
function changeDirectory(inv: Invocation) {
  const [target] = parseOptions(inv, options('*')).operands
  const { scope } = inv
  if (!target) scope.cwd = '~'
  else if (target.value === '-' || target.shape.includes(DYNAMIC) || target.shape.includes('\u0001')) scope.cwd = null
  else scope.cwd = resolvePath(target.shape, scope.cwd)
  readArgs(inv, target ? [target] : [])
  inv.allow()
}


/** export/declare/local…: records assignments; with nothing to assign (or -p) it prints variables, secrets included. */
function declare(table: OptionTable): Rule {
  return (inv) => {
    const isAssignment = (a: Arg) => /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(a.shape)
    const parsed = parseOptions(inv, table, inv.args.filter((a) => !isAssignment(a)))
    const assignments = inv.args.filter(isAssignment)
    if (!assignments.length && (!parsed.operands.length || parsed.has('-p'))) return inv.flag('dangerous', 'prints variables (secrets included)')
    const integer = parsed.has('-i')
    for (const a of assignments) {
      const eq = a.shape.indexOf('=')
      const name = a.shape.slice(0, eq).replace(/\+$/, '').replace(/\[.*$/, '')
      const value = a.value?.slice(a.value.indexOf('=') + 1)
      if (riskyVariable(name) && !CODE_VARIABLES.has(name)) inv.flag('dangerous', `sets ${quote(name, 32)}, which changes what runs`)
      if (CODE_VARIABLES.has(name)) value ? inv.runScript(value) : inv.flag('dangerous', `sets ${quote(name, 32)} to a command known only at run time`)
      // An integer variable evaluates what it is given as arithmetic.
      if (integer) {
        const risk = value === undefined ? 'evaluates an expression known only at run time' : textRisk(value, inv.scope)
        if (risk) inv.flag('dangerous', risk)
      }
      inv.scope.vars.set(name, a.shape[eq - 1] === '+' || integer ? null : (value ?? null))
    }
    for (const n of parsed.operands) if (n.value && parsed.has('-n')) inv.scope.vars.set(n.value, null)
    inv.allow()
  }
}

// `set` options that change nothing but error handling, tracing and globbing; not -k (assignments anywhere on a
// line go to the environment: `git diff GIT_EXTERNAL_DIFF=./x` would run ./x).
const SET_LETTERS = 'abefhmnuvxBCEHPTp'
const SET_NAMES = new Set([
  'allexport', 'braceexpand', 'errexit', 'errtrace', 'functrace', 'hashall', 'histexpand', 'history', 'ignoreeof',
  'interactive-comments', 'monitor', 'noclobber', 'noexec', 'noglob', 'nolog', 'notify', 'nounset', 'physical',
  'pipefail', 'posix', 'privileged', 'verbose', 'xtrace', 'vi', 'emacs',
])

function set(inv: Invocation) {
  if (!inv.args.length) return inv.flag('dangerous', 'prints every variable (secrets included)')
  for (let i = 0; i < inv.args.length; i++) {
    const v = inv.args[i].value
    if (v === undefined) return inv.flag('dangerous', 'sets options known only at run time')
    if (v === '--' || v === '-' || !/^[-+]/.test(v)) break
    if (v === '-o' || v === '+o') {
      const name = inv.args[++i]?.value
      if (name !== undefined && !SET_NAMES.has(name)) return inv.flag('dangerous', `option not known to be harmless (${quote(`${v} ${name}`, 32)})`)
      continue
    }
    const bad = [...v.slice(1)].find((c) => !SET_LETTERS.includes(c) && c !== 'o')
    if (bad) return inv.flag('dangerous', `option not known to be harmless (${quote(v, 32)})`)
    // `-euo pipefail`: the o in a cluster takes the next word.
    if (v.includes('o')) {
      const name = inv.args[++i]?.value
      if (name === undefined || !SET_NAMES.has(name)) return inv.flag('dangerous', `option not known to be harmless (${quote(`${v} ${name ?? ''}`, 32)})`)
    }
  }
  inv.allow()
}
