// Read-only commands (safe unless they read a secret) and the shell's own builtins.
import { checkRead, checkWrite } from '../effects'
import { DYNAMIC, resolvePath } from '../paths'
import type { Arg, Invocation } from '../scope'
import { CODE_VARIABLES, riskyVariable, secretVariable } from '../variables'
import { quote } from '../verdict'
import { hasFlag, operands, optionValues, slice, type OptionSpec } from './args'
import type { Rule } from './rule'

/** Every argument that may name a file is checked for secrets (`cat .env`, `--file=~/.ssh/id_rsa`). */
export function readArgs(inv: Invocation, args: Arg[] = inv.args) {
  const flag = inv.flag
  for (const a of args) {
    const v = a.value
    if (v !== undefined && v.startsWith('-') && v.length > 1) {
      const eq = v.indexOf('=')
      if (eq > 0) checkRead(slice(a, eq + 1), inv.scope, flag)
    } else checkRead(a, inv.scope, flag)
  }
}

/** A read-only command: safe unless it reads a secret. */
export const readOnly: Rule = (inv) => {
  readArgs(inv)
  inv.allow()
}

/** grep and friends: the first operand is a pattern, not a file (unless -e/-f give the pattern). */
const search: Rule = (inv) => {
  const spec: OptionSpec = { valued: ['-e', '-f', '-m', '-A', '-B', '-C', '-d', '-D', '--regexp', '--file', '--max-count', '--context', '-g', '--glob', '-t', '--type'] }
  const files = operands(inv.args, spec)
  readArgs(inv, optionValues(inv.args, ['-f', '--file']))
  readArgs(inv, optionValues(inv.args, ['-e', '--regexp']).length ? files : files.slice(1))
  inv.allow()
}

/** Commands whose arguments are not files. */
const noFiles: Rule = (inv) => inv.allow()

const READ_ONLY = [
  'ls', 'dir', 'vdir', 'cat', 'tac', 'nl', 'head', 'tail', 'wc', 'cut', 'paste', 'join', 'column', 'fold', 'fmt',
  'expand', 'unexpand', 'rev', 'diff', 'cmp', 'comm', 'file', 'stat', 'du', 'df', 'tree', 'realpath', 'readlink',
  'od', 'hexdump', 'strings', 'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'shasum',
  'cksum', 'b2sum', 'base64', 'base32', 'md5', 'less', 'more', 'look',
]
const NO_FILES = [
  'echo', 'printf', 'pwd', 'basename', 'dirname', 'which', 'whereis', 'type', 'true', 'false', ':', 'test', '[',
  'sleep', 'seq', 'yes', 'expr', 'bc', 'cal', 'whoami', 'id', 'groups', 'uname', 'uptime', 'arch', 'nproc', 'free',
  'locale', 'tty', 'getconf', 'clear', 'man', 'help', 'jobs', 'wait', 'times', 'caller', 'let', 'shift', 'return',
  'exit', 'break', 'continue', 'shopt', 'ulimit', 'umask', 'hash', 'dirs', 'unalias', 'mktemp', 'tr', 'cd', 'logname',
  'getopts', 'mapfile', 'readarray', 'sw_vers', 'lsb_release', 'tput',
]

export const basicRules: Record<string, Rule> = {
  ...Object.fromEntries(READ_ONLY.map((n) => [n, readOnly])),
  ...Object.fromEntries(NO_FILES.map((n) => [n, noFiles])),
  grep: search, egrep: search, fgrep: search, rg: search, ag: search, ack: search, zgrep: search,
  sort: (inv) => {
    for (const out of optionValues(inv.args, ['-o', '--output'])) checkWrite(out, inv.scope, inv.flag)
    readOnly(inv)
  },
  uniq: (inv) => {
    const [input, output] = operands(inv.args, { valued: ['-f', '-s', '-w'] })
    if (output) checkWrite(output, inv.scope, inv.flag)
    if (input) readArgs(inv, [input])
    inv.allow()
  },
  xxd: (inv) => {
    const [input, output] = operands(inv.args, { valued: ['-c', '-g', '-l', '-s', '-o', '-n'] })
    if (output) checkWrite(output, inv.scope, inv.flag)
    if (input) readArgs(inv, [input])
    inv.allow()
  },
  date: (inv) => (hasFlag(inv.args, 's', ['--set']) ? inv.flag('dangerous', 'sets the clock') : inv.allow()),
  hostname: (inv) => (operands(inv.args).length ? inv.flag('dangerous', 'renames the machine') : inv.allow()),
  // BSD-style `ps e`/`ps aux e` prints every process's environment.
  ps: (inv) => (inv.args.some((a) => a.value === undefined || (!a.value.startsWith('-') && a.value.includes('e'))) ? inv.flag('dangerous', 'prints process environments') : inv.allow()),
  cd: (inv) => changeDirectory(inv),
  pushd: (inv) => changeDirectory(inv),
  popd: (inv) => {
    inv.scope.cwd = null
    inv.allow()
  },
  read: (inv) => {
    for (const a of operands(inv.args, { valued: ['-a', '-d', '-i', '-n', '-N', '-p', '-t', '-u'] })) if (a.value) inv.scope.vars.set(a.value, null)
    inv.allow()
  },
  unset: (inv) => {
    for (const a of operands(inv.args)) if (a.value) inv.scope.vars.set(a.value, '')
    inv.allow()
  },
  export: declare,
  declare,
  typeset: declare,
  local: declare,
  readonly: declare,
  set: (inv) => (inv.args.length ? inv.allow() : inv.flag('dangerous', 'prints every variable (secrets included)')),
  printenv: (inv) => {
    const names = operands(inv.args)
    if (!names.length) return inv.flag('dangerous', 'prints the environment (secrets included)')
    const secret = names.find((n) => n.value === undefined || secretVariable(n.value))
    if (secret) return inv.flag('dangerous', `prints a secret variable (${quote(secret.text, 32)})`)
    inv.allow()
  },
  alias: (inv) => (inv.args.some((a) => a.value !== '-p') ? inv.flag('dangerous', 'defines an alias (changes what a name runs)') : inv.allow()),
  trap: (inv) => {
    const [action] = operands(inv.args)
    if (action && !hasFlag(inv.args, 'lp')) {
      if (action.value === undefined) return inv.flag('dangerous', 'sets a trap known only at run time')
      inv.runScript(action.value)
    }
    inv.allow()
  },
}

/** `cd dir`: later relative paths resolve there; a directory known only at run time leaves it unknown. */
function changeDirectory(inv: Invocation) {
  const [target] = operands(inv.args)
  const { scope } = inv
  if (!target) scope.cwd = '~'
  else if (target.value === '-' || target.shape.includes(DYNAMIC) || target.shape.includes('\u0001')) scope.cwd = null
  else scope.cwd = resolvePath(target.shape, scope.cwd)
  readArgs(inv, target ? [target] : [])
  inv.allow()
}

/** export/declare/local…: records assignments; with nothing to assign (or -p) it prints variables, secrets included. */
function declare(inv: Invocation) {
  const assignments = inv.args.filter((a) => /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(a.shape))
  const names = operands(inv.args).filter((a) => !assignments.includes(a))
  if (!assignments.length && (!names.length || hasFlag(inv.args, 'p'))) return inv.flag('dangerous', 'prints variables (secrets included)')
  for (const a of assignments) {
    const eq = a.shape.indexOf('=')
    const name = a.shape.slice(0, eq).replace(/\+$/, '')
    const value = a.value?.slice(a.value.indexOf('=') + 1)
    if (riskyVariable(name)) inv.flag('dangerous', `sets ${quote(name, 32)}, which changes what runs`)
    if (CODE_VARIABLES.has(name) && value) inv.runScript(value)
    inv.scope.vars.set(name, a.shape[eq - 1] === '+' ? null : (value ?? null))
  }
  for (const n of names) if (n.value && hasFlag(inv.args, 'n')) inv.scope.vars.set(n.value, null)
  inv.allow()
}
