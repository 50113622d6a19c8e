// Shells and the builtins that run strings as code. A literal script handed to another shell (`bash -c '…'`)
// is parsed and classified like the command line itself; a script the classifier cannot read (a file, a
// variable, a pipe from the network) makes the command dangerous.
import type { Invocation, Stream } from '../scope'
import type { Rule } from './rule'

const SHELLS = ['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'yash', 'fish', 'csh', 'tcsh', 'rbash']

// Start-up options that change nothing but error handling, tracing and globbing. Not listed: -i (reads start-up
// files and expands aliases), -k (assignments anywhere on a line go to the environment), --rcfile, --init-file,
// --debugger; fish's -C/--init-command (runs a command), -p/-o (write files).
const POSIX_LETTERS = 'csexvuaflnhmbBCEPTpr'
const FISH_LETTERS = 'cnNlP'
const SET_NAMES = new Set([
  'allexport', 'braceexpand', 'errexit', 'errtrace', 'functrace', 'hashall', 'histexpand', 'history', 'ignoreeof',
  'interactive-comments', 'monitor', 'noclobber', 'noexec', 'noglob', 'nolog', 'notify', 'nounset', 'physical',
  'pipefail', 'posix', 'privileged', 'verbose', 'xtrace', 'vi', 'emacs',
])
const SHOPT_NAMES = new Set(['globstar', 'nullglob', 'extglob', 'dotglob', 'failglob', 'nocaseglob', 'nocasematch', 'lastpipe', 'inherit_errexit', 'globasciiranges'])
const LONG = new Set(['--norc', '--noprofile', '--posix', '--login', '--noediting', '--restricted', '--verbose', '--no-rcs', '--no-config', '--no-execute', '--private', '--command'])

/** `bash [options] [-c script | file | (reads its input)]`. */
const shell: Rule = (inv) => {
  let command = false
  let readsInput = false
  let i = 0
  const letters = inv.name === 'fish' ? FISH_LETTERS : POSIX_LETTERS
  const unknown = (v: string) => inv.flag('dangerous', `option not known to be harmless (${v.slice(0, 32)})`)
  for (; i < inv.args.length; i++) {
    const v = inv.args[i].value
    if (v === undefined) break
    if (v === '--' || v === '-') {
      i++
      break
    }
    if (v === '--version' || v === '--help') return inv.allow()
    if (v === '-o' || v === '+o' || v === '-O' || v === '+O') {
      const name = inv.args[++i]?.value
      if (name === undefined || !(v[1] === 'o' ? SET_NAMES : SHOPT_NAMES).has(name)) unknown(`${v} ${name ?? ''}`)
    } else if (v.startsWith('--')) {
      if (!LONG.has(v)) unknown(v)
      command ||= v === '--command'
    } else if (/^[-+][a-zA-Z]+$/.test(v)) {
      const bad = [...v.slice(1)].find((c) => !letters.includes(c) && c !== 'o')
      if (bad) unknown(v)
      // `-euo pipefail`: the o in a cluster takes the next word.
      if (v.includes('o')) {
        const name = inv.args[++i]?.value
        if (name === undefined || !SET_NAMES.has(name)) unknown(`${v} ${name ?? ''}`)
      }
      command ||= v.startsWith('-') && v.includes('c')
      readsInput ||= v.startsWith('-') && v.includes('s')
    } else if (!v.startsWith('-')) break
    else unknown(v)
  }
  const operand = inv.args[i]
  if (command) {
    if (!operand) return inv.flag('dangerous', 'runs a shell without a command string')
    if (operand.value === undefined) return inv.flag('dangerous', 'runs a script built at run time')
    inv.allow()
    return inv.runScript(operand.value)
  }
  if (operand && !readsInput) {
    if (operand.process) return runStream(inv, inv.streamOf(operand.process))
    return inv.flag('dangerous', `runs a script file (${operand.text.slice(0, 48)})`)
  }
  runStream(inv, inv.stdin)
}

/** Code a shell reads from its input or a file the classifier can see through. */
function runStream(inv: Invocation, input: Stream) {
  switch (input.kind) {
    case 'network':
      return inv.flag('dangerous', 'runs code fetched from the network', true)
    case 'none':
      return inv.flag('dangerous', 'starts an interactive shell')
    case 'unknown':
      return inv.flag('dangerous', 'runs a script from its input')
    case 'text':
      // Known text, but a script piped into a shell hides what runs from a reader: never silently allowed.
      inv.flag('dangerous', 'runs a script from its input')
      return inv.runScript(input.text)
  }
}

/** eval joins its arguments and runs them in this shell. */
const evaluate: Rule = (inv) => {
  inv.flag('dangerous', 'evaluates a string as code')
  const words = inv.args.map((a) => a.value)
  if (words.some((w) => w === undefined)) return inv.flag('dangerous', 'evaluates code known only at run time')
  inv.runScript(words.join(' '), true)
}

/** source / `.` run a file in this shell: dangerous; through `<(…)` the classifier reads what it runs. */
const source: Rule = (inv) => {
  const [file] = inv.args
  if (file?.process) return runStream(inv, inv.streamOf(file.process))
  inv.flag('dangerous', 'runs a script file in this shell')
}

export const shellRules: Record<string, Rule> = {
  ...Object.fromEntries(SHELLS.map((n) => [n, shell])),
  eval: evaluate,
  source,
  '.': source,
}
