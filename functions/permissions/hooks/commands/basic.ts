// Read-only commands (safe unless they read a secret); the shell's builtins are in ./builtins.ts. Each program has its option
// table (functions/permissions/hooks/commands/options.ts): `*` marks the programs whose every option was reviewed as harmless (GNU
// coreutils and the BSDs: none runs a program or writes a file), the others list what they may carry.
import { checkRead, checkWrite } from '../effects'
import type { Arg, Invocation } from '../scope'
import { secretVariable } from '../variables'
import { quote } from '../verdict'
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

export const basicRules: Record<string, Rule> = {
  ...Object.fromEntries(Object.entries(HARMLESS_READERS).map(([n, spec]) => [n, reads(options(spec))])),
  ...Object.fromEntries(Object.entries(HARMLESS_TEXT).map(([n, spec]) => [n, reads(options(spec), false)])),
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
  printenv: (inv) => {
    const names = parseOptions(inv, options('-0 --null')).operands
    if (!names.length) return inv.flag('dangerous', 'prints the environment (secrets included)')
    const secret = names.find((n) => n.value === undefined || secretVariable(n.value))
    if (secret) return inv.flag('dangerous', `prints a secret variable (${quote(secret.text, 32)})`)
    inv.allow()
  },
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
