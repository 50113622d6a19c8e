// Wrappers run another command: they are unwrapped and what they run is classified (with their own effect:
// running as another user is itself dangerous).
import { resolvePath } from '../paths'
import { LIMITS, literalArg, unknownArg, type Arg, type Invocation } from '../scope'
import { riskyVariable } from '../variables'
import { quote } from '../verdict'
import { optionValues, takesValue } from './args'
import { options, parseOptions, type OptionTable } from './options'
import type { Rule } from './rule'

/** What follows a wrapper's options (and `skip` operands of its own, like timeout's duration). */
export function commandAfterOptions(args: Arg[], valued: readonly string[] = [], skip = 0): Arg[] {
  let i = 0
  let ended = false
  for (; i < args.length; i++) {
    const v = args[i].value
    if (!ended && v === '--') {
      ended = true
      continue
    }
    if (ended || v === undefined || !v.startsWith('-') || v === '-') {
      if (skip-- > 0) continue
      break
    }
    if (takesValue(v, { valued })) i++
  }
  return args.slice(i)
}

/** A wrapper that runs the command after its options (those in `table`) in the same conditions. */
function wrapper(table: OptionTable, skip = 0): Rule {
  return (inv) => {
    const inner = parseOptions(inv, table).operands.slice(skip)
    inv.allow()
    if (inner.length) inv.run(inner, inv.stdin)
  }
}

/** sudo, doas…: dangerous in itself, and what it runs is classified too (`sudo rm -rf /` is destructive). */
function privileged(valued: readonly string[]): Rule {
  return (inv) => {
    inv.flag('dangerous', 'runs as another user')
    let inner = commandAfterOptions(inv.args, valued)
    while (inner.length && inner[0].value !== undefined && /^[A-Za-z_]\w*=/.test(inner[0].value)) {
      assignment(inv, inner[0].value)
      inner = inner.slice(1)
    }
    if (inner.length) inv.run(inner, inv.stdin)
  }
}

function assignment(inv: Invocation, text: string) {
  const name = text.slice(0, text.indexOf('='))
  if (riskyVariable(name)) inv.flag('dangerous', `sets ${quote(name, 32)}, which changes what runs`)
}

const ENV_OPTIONS = /^(-[i0v]+|--ignore-environment|--null|--debug|--unset=.*|--list-signal-handling|--(block|default|ignore)-signal(=.*)?)$/

/** `env [-i] [-u NAME] [-C DIR] [NAME=value]… [command]`; `-S` splits a string into a command line. */
const env: Rule = (inv) => {
  const args = inv.args
  let cwd: string | null | undefined
  let i = 0
  for (; i < args.length; i++) {
    const v = args[i].value
    if (v === undefined) break
    const split = v === '-S' || v === '--split-string' ? args[++i]?.value : v.startsWith('--split-string=') ? v.slice(15) : /^-S./.test(v) ? v.slice(2) : null
    if (split !== null) {
      const rest = args.slice(i + 1).map((a) => a.value)
      if (split === undefined || rest.some((r) => r === undefined)) return inv.flag('dangerous', 'runs a command line known only at run time')
      inv.allow()
      return inv.runScript([split, ...rest].join(' '))
    }
    if (v === '-C' || v === '--chdir' || v.startsWith('--chdir=')) {
      const dir = v.startsWith('--chdir=') ? v.slice(8) : args[++i]?.value
      cwd = dir === undefined ? null : resolvePath(dir, inv.scope.cwd)
    } else if (v === '-u' || v === '--unset') i++
    else if (/^[A-Za-z_]\w*=/.test(v)) assignment(inv, v)
    else if (v === '-' || v === '--' || ENV_OPTIONS.test(v)) continue
    // -P (BSD: where to look for the program), anything else: not known to be harmless.
    else if (v.startsWith('-')) inv.flag('dangerous', `option not known to be harmless (${quote(v, 32)})`)
    else break
  }
  const inner = args.slice(i)
  if (!inner.length) return inv.flag('dangerous', 'prints the environment (secrets included)')
  inv.allow()
  const saved = inv.scope.cwd
  if (cwd !== undefined) inv.scope.cwd = cwd
  inv.run(inner, inv.stdin)
  inv.scope.cwd = saved
}

const XARGS = options(
  '-0 -d: -I: -i= -L: -l= -n: -P: -s: -t -r -x -E: -e= -a:r -p -o --null --delimiter: --replace= --max-args: --max-lines= ' +
    '--max-procs: --max-chars: --verbose --no-run-if-empty --exit --eof= --arg-file:r --interactive --open-tty --process-slot-var: --show-limits',
  { firstOperandEnds: true },
)

/** xargs runs its command with words read from its input: known input (`echo / | xargs rm -rf`) is used. */
const xargs: Rule = (inv) => {
  const inner = parseOptions(inv, XARGS).operands
  const argv = inner.length ? inner : [literalArg('echo')]
  const input = inv.stdin.kind === 'text' ? inv.stdin.text.split(/\s+/).filter(Boolean).slice(0, LIMITS.fields).map(literalArg) : [unknownArg('(input)')]
  inv.allow()
  inv.run([...argv, ...input])
}

const WATCH = options(
  '-n: -d= -t -b -e -g -c -x -p -q: -w -r --interval: --differences= --no-title --beep --errexit --chgexit --color --no-color --exec --precise --equexit: --no-wrap --no-rerun',
  { firstOperandEnds: true },
)

/** `watch cmd args` runs `sh -c "cmd args"`; with -x it runs the command directly. */
const watch: Rule = (inv) => {
  const parsed = parseOptions(inv, WATCH)
  inv.allow()
  if (parsed.has('-x', '--exec')) return inv.run(parsed.operands)
  const words = parsed.operands.map((a) => a.value)
  if (words.some((w) => w === undefined)) return inv.flag('dangerous', 'runs a command line known only at run time')
  inv.runScript(words.join(' '))
}

const first = { firstOperandEnds: true }

/** `/usr/bin/time -o FILE cmd` writes its report to FILE. */
const time = wrapper(options('-o:w -a -f: -p -v -q --output:w --append --format: --portability --verbose --quiet', first))

export const wrapperRules: Record<string, Rule> = {
  env,
  xargs,
  watch,
  time,
  nice: wrapper(options('-n: --adjustment: -#', first)),
  nohup: wrapper(options('', first)),
  timeout: wrapper(options('-s: -k: -v -p -f --signal: --kill-after: --verbose --preserve-status --foreground', first), 1),
  gtimeout: wrapper(options('-s: -k: -v -p -f --signal: --kill-after: --verbose --preserve-status --foreground', first), 1),
  stdbuf: wrapper(options('-i: -o: -e: --input: --output: --error:', first)),
  // ionice -p changes another process: not listed.
  ionice: wrapper(options('-c: -n: -t --class: --classdata: --ignore', first)),
  command: (inv) => (inv.args.some((a) => a.value === '-v' || a.value === '-V') ? inv.allow() : wrapper(options('-p', first))(inv)),
  builtin: wrapper(options('', first)),
  exec: wrapper(options('-a: -c -l', first)),
  busybox: (inv) => (inv.args[0]?.value?.startsWith('--list') ? inv.allow() : wrapper(options('', first))(inv)),
  sudo: privileged(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '-T', '-R', '--user', '--group', '--host', '--prompt', '--chdir', '--role', '--type', '--other-user', '--command-timeout', '--chroot']),
  doas: privileged(['-u', '-C']),
  pkexec: privileged(['--user']),
  run0: privileged(['-u', '--user', '-D', '--chdir']),
  runuser: privileged(['-u', '-g', '-G', '--user', '--group']),
  chroot: (inv) => {
    inv.flag('dangerous', 'runs in another root directory')
    const inner = commandAfterOptions(inv.args, ['--userspec', '--groups'], 1)
    if (inner.length) inv.run(inner)
  },
  su: (inv) => {
    inv.flag('dangerous', 'runs as another user')
    for (const script of optionValues(inv.args, ['-c', '--command'])) {
      if (script.value === undefined) inv.flag('dangerous', 'runs a command known only at run time')
      else inv.runScript(script.value)
    }
  },
}
