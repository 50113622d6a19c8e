// Read-only commands (safe unless they read a secret) and the shell's own builtins. Each program has its option
// table (functions/permissions/hooks/commands/options.ts): `*` marks the programs whose every option was reviewed as harmless (GNU
// coreutils and the BSDs: none runs a program or writes a file), the others list what they may carry.
import { checkRead, checkWrite } from '../effects'
import { DYNAMIC, resolvePath } from '../paths'
import type { Arg, Invocation } from '../scope'
import { CODE_VARIABLES, riskyVariable, secretVariable } from '../variables'
import { quote } from '../verdict'
import { subscriptRisk, textRisk } from '../arithmetic'
import { options, parseOptions, type OptionTable } from './options'
import type { Rule } from './rule'

/** Every argument that may name a file is checked for secrets (`cat .env`, `--file=~/.ssh/id_rsa`). */
export function readArgs(inv: Invocation, args: Arg[] = inv.args) {
  const flag = inv.flag
  for (const a of args) {
    const v = a.value
    if (v !== undefined && v.startsWith('-') && v.length > 1) {
      const eq = v.indexOf('=')
      if (eq > 0) checkRead({ ...a, value: v.slice(eq + 1), shape: a.shape.slice(eq + 1) }, inv.scope, flag)
    } else checkRead(a, inv.scope, flag)
  }
}

/** A program whose options are in `table`: its operands are files it reads (`files`) or text. */
export function reads(table: OptionTable, files = true): Rule {
  return (inv) => {
    const { operands } = parseOptions(inv, table)
    if (files) readArgs(inv, operands)
    inv.allow()
  }
}

// Programs whose every option is harmless; the listed options are those that take a value.
const HARMLESS_READERS: Record<string, string> = {
  ls: '* -I: -T: -w: --hide: --ignore: --block-size: --format: --sort: --time-style:',
  cat: '*',
  tac: '* -s:',
  nl: '* -b: -d: -f: -h: -i: -l: -n: -s: -v: -w:',
  head: '* -n: -c: -#',
  tail: '* -n: -c: -s: -#',
  wc: '* --files0-from:r',
  cut: '* -b: -c: -d: -f:',
  paste: '* -d:',
  join: '* -a: -e: -j: -o: -t: -v: -1: -2:',
  column: '* -c: -s: -o: -N: -R: -H: -l: -E: -W: -d: -r:',
  fold: '* -w:',
  fmt: '* -w: -p: -g: -#',
  expand: '* -t:',
  unexpand: '* -t:',
  rev: '*',
  diff: '* -C: -U: -F: -I: -x: -X:r -S: -L: -D: -W: --from-file:r --to-file:r --exclude-from:r',
  cmp: '* -i: -n:',
  comm: '*',
  stat: '* -c: -f: -t:',
  du: '* -B: -d: -t: -X:r --exclude-from:r --files0-from:r',
  df: '* -B: -t: -x:',
  realpath: '*',
  readlink: '*',
  od: '* -A: -j: -N: -t:',
  hexdump: '* -e: -f:r -n: -s:',
  strings: '* -n: -t: -e: -T: -s: -#',
  cksum: '* -a: -l:',
  b2sum: '* -l:',
  shasum: '* -a:',
  md5: '* -s:',
  look: '* -t:',
  file: '* -m:r -f:r -F: -e: -P: --magic-file:r --files-from:r',
  grep: '* -e: -f:r -m: -A: -B: -C: -d: -D: -# --regexp: --file:r --exclude-from:r',
}
for (const sum of ['md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum']) HARMLESS_READERS[sum] = '*'
for (const alias of ['dir', 'vdir']) HARMLESS_READERS[alias] = HARMLESS_READERS.ls
for (const alias of ['egrep', 'fgrep']) HARMLESS_READERS[alias] = HARMLESS_READERS.grep

// Programs and builtins whose arguments are not files and whose every option is harmless.
const HARMLESS_TEXT: Record<string, string> = {
  echo: '*',
  pwd: '*',
  basename: '* -s: --suffix:',
  dirname: '*',
  which: '*',
  whereis: '* -B: -M: -S:',
  type: '*',
  true: '*',
  false: '*',
  ':': '*',
  test: '*',
  '[': '*',
  sleep: '*',
  seq: '* -f: -s: --format: --separator:',
  yes: '*',
  expr: '*',
  cal: '*',
  whoami: '*',
  id: '*',
  groups: '*',
  uname: '*',
  uptime: '*',
  arch: '*',
  nproc: '*',
  free: '*',
  locale: '*',
  tty: '*',
  getconf: '*',
  clear: '*',
  help: '*',
  jobs: '*',
  wait: '*',
  times: '*',
  caller: '*',
  shift: '*',
  return: '*',
  exit: '*',
  break: '*',
  continue: '*',
  shopt: '*',
  ulimit: '*',
  umask: '*',
  dirs: '*',
  unalias: '*',
  tr: '*',
  logname: '*',
  sw_vers: '*',
  lsb_release: '*',
  tput: '*',
}

// Read-only programs with options that are not all harmless: only those listed.
const BASE64 = options('-d -D -i -w: -b: --decode --ignore-garbage --wrap: --break:')
const SORT = options(
  '-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z -k: -t: -S: -o:w -T:w --ignore-leading-blanks --dictionary-order --ignore-case ' +
    '--general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse --version-sort ' +
    '--sort: --check= --merge --stable --unique --zero-terminated --key: --field-separator: --buffer-size: --parallel: --batch-size: ' +
    '--output:w --temporary-directory:w --files0-from:r --random-source:r --debug',
)
const UNIQ = options('-c -d -D -i -u -z -f: -s: -w: --count --repeated --all-repeated= --group= --ignore-case --unique --zero-terminated --skip-fields: --skip-chars: --check-chars:')
const XXD = options('-a -b -C -e -E -i -p -ps -plain -postscript -r -R: -u -c: -g: -l: -s: -o: -n: -d -autoskip -bits -cols: -groupsize: -len: -seek: -revert -include -uppercase')
const TREE = options('-a -d -l -f -x -P: -I: -L: -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -i -A -S -n -C -J -X --noreport --dirsfirst --filelimit: --charset: --prune --matchdirs --ignore-case --du --si --inodes --device --gitignore --timefmt: --sort: -H: -T: --nolinks')
const BC = options('-l -q -s -w -i -c -v --mathlib --quiet --standard --warn --interactive')
const MKTEMP = options('-d -u -q -t -p:w --directory --dry-run --quiet --tmpdir= --suffix:')
const DATE = options('-u -R -I= -d: -r:r -f:r --date: --reference:r --file:r --utc --universal --rfc-email --rfc-3339: --iso-8601= --debug -j -n -v:', { firstOperandEnds: true })

// declare -n makes a name reference (assigning through it reaches any variable): not in the table.
const DECLARE = options('-a -A -f -F -g -i -I -l -p -r -t -u -x')

export const basicRules: Record<string, Rule> = {
  ...Object.fromEntries(Object.entries(HARMLESS_READERS).map(([n, spec]) => [n, reads(options(spec))])),
  ...Object.fromEntries(Object.entries(HARMLESS_TEXT).map(([n, spec]) => [n, reads(options(spec), false)])),
  test: testCommand,
  '[': testCommand,
  // Pagers run commands (`!cmd`, `v` opens an editor, LESSOPEN, `--lesskey-src`); man renders through groff and a pager.
  ...Object.fromEntries(['less', 'more', 'most', 'pg', 'man'].map((n) => [n, pager])),
  // grep-likes: the first operand is a pattern, not a file (unless -e/-f give the pattern).
  grep: search(options(HARMLESS_READERS.grep)),
  egrep: search(options(HARMLESS_READERS.grep)),
  fgrep: search(options(HARMLESS_READERS.grep)),
  // ripgrep: --pre and --hostname-bin run programs, -z/--search-zip runs decompressors (Codex leaves them out too).
  rg: search(
    options(
      '-e: -f:r -g: -t: -T: -m: -A: -B: -C: -M: -j: -i -s -S -w -x -v -F -P -U -n -N -l -c -o -q -H -I -L -u -uu -uuu -a -0 -p -b --regexp: --file:r --glob: --iglob: ' +
        '--type: --type-not: --type-add: --type-clear: --max-count: --after-context: --before-context: --context: --max-columns: --threads: --ignore-case ' +
        '--case-sensitive --smart-case --word-regexp --line-regexp --invert-match --fixed-strings --pcre2 --multiline --multiline-dotall --line-number ' +
        '--no-line-number --files-with-matches --files-without-match --count --count-matches --only-matching --quiet --with-filename --no-filename ' +
        '--hidden --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global --no-ignore-parent --ignore-file:r --follow --text --null --files ' +
        '--heading --no-heading --column --color: --colors: --json --vimgrep --stats --sort: --sortr: --max-depth: --max-filesize: --replace: -r: ' +
        '--trim --pretty --byte-offset --type-list --no-messages --no-config --one-file-system --binary --passthru --debug --field-match-separator: ' +
        '--field-context-separator: --context-separator: --path-separator: --max-columns-preview --encoding: -E: --engine: --unrestricted --glob-case-insensitive --include-zero --no-unicode --crlf',
    ),
  ),
  ag: search(options('-i -s -S -w -v -Q -l -L -c -o -G: -g: -A: -B: -C: -m: --ignore: --hidden -u -U -a -t -f --nocolor --color --noheading --heading --column --literal --ignore-case --case-sensitive --smart-case --files-with-matches --count --depth:')),
  ack: search(options('-i -s -w -v -Q -l -L -c -o -h -H -n -f -g: -A: -B: -C: -m: --ignore-dir: --type: --nocolor --color --noheading --heading --column --literal --ignore-case --smart-case --files-with-matches --count --noenv')),
  base64: reads(BASE64),
  base32: reads(BASE64),
  tree: reads(TREE),
  bc: reads(BC),
  sort: reads(SORT),
  uniq: (inv) => {
    const [input, output] = parseOptions(inv, UNIQ).operands
    if (output) checkWrite(output, inv.scope, inv.flag)
    if (input) readArgs(inv, [input])
    inv.allow()
  },
  xxd: (inv) => {
    const [input, output] = parseOptions(inv, XXD).operands
    if (output) checkWrite(output, inv.scope, inv.flag)
    if (input) readArgs(inv, [input])
    inv.allow()
  },
  mktemp: (inv) => {
    const { operands } = parseOptions(inv, MKTEMP)
    operands.forEach((t) => checkWrite(t, inv.scope, inv.flag))
    inv.allow()
  },
  date: (inv) => {
    const parsed = parseOptions(inv, DATE)
    // `date MMDDhhmm` (an operand not starting with +) and -s/--set set the clock.
    if (parsed.has('-s', '--set') || parsed.operands.some((a) => a.value === undefined || !a.value.startsWith('+'))) return inv.flag('dangerous', 'sets the clock')
    inv.allow()
  },
  hostname: (inv) => (inv.args.some((a) => a.value === undefined || !/^-[sfdiIaAy]+$|^--(short|fqdn|long|domain|ip-address|all-ip-addresses|all-fqdns)$/.test(a.value)) ? inv.flag('dangerous', 'renames the machine') : inv.allow()),
  // BSD-style `ps e`/`ps aux e` prints every process's environment.
  ps: (inv) => (inv.args.some((a) => a.value === undefined || (!a.value.startsWith('-') && a.value.includes('e'))) ? inv.flag('dangerous', 'prints process environments') : inv.allow()),
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
  printenv: (inv) => {
    const names = parseOptions(inv, options('-0 --null')).operands
    if (!names.length) return inv.flag('dangerous', 'prints the environment (secrets included)')
    const secret = names.find((n) => n.value === undefined || secretVariable(n.value))
    if (secret) return inv.flag('dangerous', `prints a secret variable (${quote(secret.text, 32)})`)
    inv.allow()
  },
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

/** grep and friends: the first operand is a pattern, not a file (unless -e/-f give the pattern). */
function search(table: OptionTable): Rule {
  return (inv) => {
    const parsed = parseOptions(inv, table)
    const patterns = parsed.values('-e', '--regexp', '-f', '--file')
    readArgs(inv, patterns.length ? parsed.operands : parsed.operands.slice(1))
    inv.allow()
  }
}

function pager(inv: Invocation) {
  inv.flag('dangerous', 'a pager (it can run commands)')
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
