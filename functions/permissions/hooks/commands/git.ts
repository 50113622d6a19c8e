// git: reading the repository (status, log, diff, show, blame, grep, plumbing reads) and staging (`add`,
// `rm --cached`, `restore --staged`) are safe with the options listed here. Everything that runs hooks is
// dangerous: commit, merge, rebase, cherry-pick, revert and am run the commit hooks, checkout and switch run
// post-checkout, and every ref update (branch, tag, stash, reset…) runs reference-transaction; with
// `core.hooksPath` in the work tree (husky) or a hook manager reading its config there (lefthook, pre-commit,
// lint-staged), that is code the agent can write. Discarding work, rewriting history, changing config and any
// network operation are dangerous; a force push to the main branch (or a mirror push, or deleting main) is
// destructive.
import { checkWrite } from '../effects'
import { literalArg, type Arg, type Invocation } from '../scope'
import { quote } from '../verdict'
import { hasFlag, operands, values } from './args'
import { readArgs } from './basic'
import { options, parseOptions, type OptionTable, type Parsed } from './options'
import type { Rule } from './rule'

const NETWORK = new Set(['clone', 'fetch', 'pull', 'ls-remote', 'submodule', 'send-email', 'request-pull', 'daemon', 'svn', 'p4', 'http-fetch', 'http-push', 'remote-ext', 'archive'])
const HISTORY_REWRITE = new Set(['gc', 'prune', 'filter-branch', 'filter-repo', 'update-ref', 'replace', 'reflog-expire', 'prune-packed', 'repack'])
const COMMIT_HOOKS = new Set(['commit', 'merge', 'rebase', 'cherry-pick', 'revert', 'am', 'pull'])
const MAIN_BRANCHES = new Set(['main', 'master', 'trunk', 'production'])

// Options of git itself before the subcommand. Not listed: -c, --config-env, --exec-path, --git-dir,
// --work-tree, --namespace, -p/--paginate (they set configuration or where git looks, and config can run programs).
const GIT = options('--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-replace-objects --no-lazy-fetch -C:r', { firstOperandEnds: true })

// What log, show, diff and their kin may carry: display and selection. Not listed: --ext-diff and --textconv (run
// programs), --show-signature (runs gpg), -O<orderfile> aside (read); --output is a file written.
const LOG = options(
  '-p -u -s -z -w -b -a -R -t -m -c -r -i -E -F -P -g -D -W -# -n: -U= -M= -C= -B= -l= -X= -S: -G: -L: -O:r -1 ' +
  '--cc --dd --patch --no-patch --unified: --raw --stat= --numstat --shortstat --dirstat= --summary ' +
  '--compact-summary --name-only --name-status --color= --no-color --word-diff= --no-renames --renames --check ' +
  '--abbrev= --no-abbrev --find-renames= --find-copies= --find-copies-harder --diff-filter: --relative= ' +
  '--no-relative --text --ignore-space-change --ignore-all-space --ignore-submodules= --function-context ' +
  '--exit-code --quiet --no-ext-diff --no-textconv --no-prefix --minimal --patience --histogram --diff-algorithm: ' +
  '--output:w --cached --staged --merge-base --no-index --follow --no-follow --decorate= --no-decorate --source ' +
  '--full-diff --oneline --format= --pretty= --abbrev-commit --no-abbrev-commit --notes= --no-notes --show-notes= ' +
  '--relative-date --date: --parents --children --left-right --graph --max-count: --skip: --since: --after: ' +
  '--until: --before: --author: --committer: --grep: --all-match --invert-grep --regexp-ignore-case --basic-regexp ' +
  '--extended-regexp --fixed-strings --perl-regexp --merges --no-merges --first-parent --not --all --branches= ' +
  '--tags= --remotes= --glob: --exclude: --reflog --walk-reflogs --merge --boundary --date-order --topo-order ' +
  '--reverse --count --diff-merges: --no-diff-merges --root --no-commit-id --always --objects -o:w ' +
  '--output-directory:w -k -N -v -e -h',
)
const STATUS = options(
  '-s -b -v -z -u= --short --branch --porcelain= --long --verbose --untracked-files= --ignored= --ignore-submodules= --column= ' +
    '--no-column --ahead-behind --no-ahead-behind --renames --no-renames --find-renames= --show-stash --null',
)
const BLAME = options(
  '-b -c -e -f -l -n -p -s -t -w -M= -C= -L: -S:r --root --show-stats --score-debug --show-name --show-number --show-email ' +
    '--porcelain --line-porcelain --incremental --encoding: --contents:r --date: --progress --no-progress --reverse: --first-parent ' +
    '--ignore-rev: --ignore-revs-file:r --color-lines --color-by-age --minimal --abbrev=',
)
// git grep: -O/--open-files-in-pager runs a program: not listed.
const GREP = options(
  '-a -i -I -w -v -h -H -l -L -c -o -p -W -n -z -q -r -E -F -G -P -# -e: -f:r -A: -B: -C: -m: --cached --untracked --no-index ' +
    '--no-exclude-standard --exclude-standard --recurse-submodules --text --ignore-case --word-regexp --invert-match --full-name ' +
    '--extended-regexp --basic-regexp --fixed-strings --perl-regexp --line-number --column --files-with-matches --name-only ' +
    '--files-without-match --null --only-matching --count --color= --no-color --break --heading --show-function --function-context ' +
    '--threads: --and --or --not --all-match --quiet --max-depth: --max-count: --context: --after-context: --before-context: ' +
    '--recursive --no-recursive',
)
// Plumbing reads: every option of these only selects or formats what is printed.
const PLUMBING = options('*')
const ADD = options('-A -u -N -f -v -n --all --update --intent-to-add --force --verbose --dry-run --ignore-errors --ignore-removal --no-all --no-ignore-removal --renormalize --chmod: --pathspec-from-file:r --pathspec-file-nul --sparse --ignore-missing')
const CONFIG_READ = options(
  '-l -z --list --get --get-all --get-regexp --get-urlmatch --global --system --local --worktree --file:r -f:r --blob: --show-origin ' +
    '--show-scope --name-only --null --type: --bool --int --bool-or-int --path --expiry-date --default: --includes --no-includes --all --regexp --url: --fixed-value',
)
const BRANCH_LIST = options('-a -r -v -vv -l -i --all --remotes --verbose --list --show-current --contains: --no-contains: --merged: --no-merged: --sort: --format: --color= --no-color --column= --no-column --points-at: --ignore-case --abbrev= --no-abbrev')
const TAG_LIST = options('-l -n= -i --list --sort: --contains: --no-contains: --merged: --no-merged: --points-at: --format: --color= --column= --no-column --ignore-case')

// Subcommands that read, with their tables; `paths`: operands name files (checked for secrets).
const READS: Record<string, OptionTable> = {
  status: STATUS,
  log: LOG,
  show: LOG,
  diff: LOG,
  whatchanged: LOG,
  'diff-tree': LOG,
  'diff-files': LOG,
  'diff-index': LOG,
  shortlog: LOG,
  'range-diff': LOG,
  'format-patch': LOG,
  blame: BLAME,
  annotate: BLAME,
  grep: GREP,
  ...Object.fromEntries(
    ['rev-parse', 'ls-files', 'ls-tree', 'cat-file', 'describe', 'name-rev', 'rev-list', 'merge-base', 'show-ref', 'for-each-ref', 'count-objects', 'check-ignore', 'check-attr', 'var', 'version', 'cherry', 'show-branch'].map((s) => [s, PLUMBING]),
  ),
}

const git: Rule = (inv) => {
  const top = parseOptions(inv, GIT)
  if (inv.args[0]?.value === '--version') return inv.allow()
  if (inv.args[0]?.value === '--help' && inv.args.length === 1) return inv.allow()
  const [subArg, ...rest] = top.operands
  if (!subArg) return inv.allow()
  const sub = subArg.value?.toLowerCase()
  if (sub === undefined) return inv.flag('dangerous', 'runs a git command known only at run time')
  const special = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined
  if (special) return special(inv, rest)
  const table = Object.hasOwn(READS, sub) ? READS[sub] : undefined
  if (table) {
    const parsed = parseOptions(inv, table, rest)
    // format-patch writes its patches here unless -o says where.
    if (sub === 'format-patch' && !parsed.values('-o', '--output-directory').length) checkWriteArg(inv, literalArg('.'))
    return paths(inv, parsed)
  }
  if (COMMIT_HOOKS.has(sub)) return inv.flag('dangerous', `runs git hooks (git ${sub}: code in the repository)`)
  if (sub === 'checkout' || sub === 'switch') return checkout(inv, sub, rest)
  if (NETWORK.has(sub)) return inv.flag('dangerous', `network access (git ${sub})`)
  if (HISTORY_REWRITE.has(sub)) return inv.flag('dangerous', `rewrites or prunes history (git ${sub})`)
  if (sub === 'help') return inv.flag('dangerous', 'opens a manual page (a pager or a browser)')
  inv.flag('dangerous', `unknown git command (${quote(sub, 24)})`)
}

/** Safe, unless a path it names is a secret (`git add .env`, `git show HEAD -- .env`). */
function paths(inv: Invocation, parsed: Parsed) {
  readArgs(inv, parsed.operands)
  inv.allow()
}

const discards = (inv: Invocation) => inv.flag('dangerous', 'discards uncommitted changes')
const updatesRefs = (inv: Invocation, what: string) => inv.flag('dangerous', `${what} (updating refs runs the reference-transaction hook)`)
const verb = (rest: Arg[]) => operands(rest)[0]?.value

/** checkout/switch: discarding work, else the post-checkout hook runs. */
function checkout(inv: Invocation, sub: string, rest: Arg[]) {
  if (sub === 'checkout' && (rest.some((a) => a.value === '--' || a.value === '.') || hasFlag(rest, 'fp', ['--force', '--patch'], { valued: ['-b', '-B'] }))) return discards(inv)
  if (sub === 'switch' && hasFlag(rest, 'f', ['--force', '--discard-changes'])) return discards(inv)
  inv.flag('dangerous', `runs git hooks (git ${sub}: post-checkout)`)
}

const SUBCOMMANDS: Record<string, (inv: Invocation, rest: Arg[]) => void> = {
  add: (inv, rest) => paths(inv, parseOptions(inv, ADD, rest)),
  rm: (inv, rest) => {
    const parsed = parseOptions(inv, options('-r -q -n --cached --quiet --dry-run --ignore-unmatch --sparse --pathspec-from-file:r --pathspec-file-nul'), rest)
    if (!parsed.has('--cached')) return inv.flag('dangerous', 'deletes files')
    paths(inv, parsed)
  },
  restore: (inv, rest) => {
    const parsed = parseOptions(inv, options('-S -W -s: -q --staged --worktree --source: --quiet --no-overlay --overlay --ignore-unmerged --pathspec-from-file:r --pathspec-file-nul'), rest)
    if (!parsed.has('-S', '--staged') || parsed.has('-W', '--worktree')) return discards(inv)
    paths(inv, parsed)
  },
  mv: (inv, rest) => {
    // Renames: every operand is written (a new name like `sub/HEAD` is checked like any write).
    const parsed = parseOptions(inv, options('-f -k -n -v --force --dry-run --verbose --sparse'), rest)
    parsed.operands.forEach((a) => checkWriteArg(inv, a))
    inv.allow()
  },
  init: (inv, rest) => {
    // --bare and --separate-git-dir make a repository whose config is an ordinary file; --template copies hooks.
    const parsed = parseOptions(inv, options('-q -b: --quiet --initial-branch: --object-format: --ref-format: --shared='), rest)
    parsed.operands.forEach((a) => checkWriteArg(inv, a))
    inv.allow()
  },
  apply: (inv, rest) => {
    const parsed = parseOptions(inv, options('--check --stat --numstat --summary -p: -C: -R -v -z --reverse --verbose --recount --allow-empty --exclude: --include: --whitespace: --ignore-whitespace --ignore-space-change'), rest)
    if (!parsed.has('--check', '--stat', '--numstat', '--summary')) return inv.flag('dangerous', 'applies a patch file (the files it changes are named inside it)')
    readArgs(inv, parsed.operands)
    inv.allow()
  },
  reset: (inv, rest) => (hasFlag(rest, '', ['--hard', '--merge', '--keep']) ? discards(inv) : updatesRefs(inv, 'moves HEAD')),
  clean: (inv, rest) => (hasFlag(rest, 'n', ['--dry-run']) ? inv.allow() : inv.flag('dangerous', 'deletes untracked files')),
  stash: (inv, rest) => {
    const v = verb(rest)
    if (v === 'drop' || v === 'clear') return inv.flag('dangerous', 'drops stashed changes')
    if (v === 'list' || v === 'show') return paths(inv, parseOptions(inv, LOG, rest.slice(1)))
    updatesRefs(inv, 'changes the stash')
  },
  branch: (inv, rest) => {
    if (hasFlag(rest, 'dDMmCcf', ['--delete', '--force', '--move', '--copy'])) return inv.flag('dangerous', 'deletes, moves or overwrites branches')
    if (hasFlag(rest, 'ut', ['--set-upstream-to', '--unset-upstream', '--edit-description', '--track', '--no-track'])) return inv.flag('dangerous', 'changes branch configuration')
    const parsed = parseOptions(inv, BRANCH_LIST, rest)
    if (parsed.operands.length && !parsed.has('-l', '--list')) return updatesRefs(inv, 'creates a branch')
    inv.allow()
  },
  tag: (inv, rest) => {
    if (hasFlag(rest, 'df', ['--delete', '--force'], { valued: ['-m', '-F', '-u'] })) return inv.flag('dangerous', 'deletes or moves tags')
    const parsed = parseOptions(inv, TAG_LIST, rest)
    if (parsed.operands.length && !parsed.has('-l', '--list')) return updatesRefs(inv, 'creates a tag')
    inv.allow()
  },
  reflog: (inv, rest) => {
    const v = verb(rest)
    if (v === 'expire' || v === 'delete' || v === 'drop') return inv.flag('dangerous', 'prunes the reflog')
    paths(inv, parseOptions(inv, LOG, v === 'show' || v === 'exists' ? rest.slice(1) : rest))
  },
  worktree: (inv, rest) => {
    const v = verb(rest)
    if (v === 'list') return inv.allow()
    if (v === 'remove' || v === 'prune') return inv.flag('dangerous', 'removes worktrees')
    inv.flag('dangerous', 'changes worktrees (checking one out runs post-checkout)')
  },
  config: (inv, rest) => {
    const ops = operands(rest)
    const reads = hasFlag(rest, 'l', ['--get', '--get-all', '--get-regexp', '--list', '--get-urlmatch']) || ['get', 'list'].includes(ops[0]?.value ?? '') || ops.length === 1
    if (!reads) return inv.flag('dangerous', 'changes git configuration (can make git run programs)')
    parseOptions(inv, CONFIG_READ, ['get', 'list'].includes(ops[0]?.value ?? '') ? rest.filter((a) => a !== ops[0]) : rest)
    inv.allow()
  },
  remote: (inv, rest) => {
    const v = verb(rest)
    if (v === undefined && rest.every((a) => a.value === '-v' || a.value === '--verbose')) return inv.allow()
    if (v === 'get-url' || (v === 'show' && rest.some((a) => a.value === '-n'))) return inv.allow()
    // `git remote show origin` asks the remote.
    inv.flag('dangerous', v === 'show' ? 'network access (git remote show)' : 'changes remotes')
  },
  notes: (inv, rest) => (['list', 'show'].includes(verb(rest) ?? 'list') && rest.every((a) => !a.value?.startsWith('-')) ? inv.allow() : updatesRefs(inv, 'changes notes')),
  'sparse-checkout': (inv, rest) => (verb(rest) === 'list' ? inv.allow() : inv.flag('dangerous', 'changes the checked-out files (post-checkout runs)')),
  bisect: (inv, rest) => {
    const v = rest[0]?.value
    if (v === 'log') return inv.allow()
    inv.flag('dangerous', 'checks out commits (post-checkout runs)')
    if (v === 'run') inv.run(rest.slice(1))
  },
  rebase: (inv, rest) => {
    inv.flag('dangerous', 'runs git hooks (git rebase: code in the repository)')
    const exec = rest.findIndex((a) => a.value === '-x' || a.value === '--exec')
    if (exec >= 0) {
      const cmd = rest[exec + 1]?.value
      if (cmd === undefined) return inv.flag('dangerous', 'runs a command known only at run time')
      inv.runScript(cmd)
    }
  },
  push,
}

/** A path git writes: the same checks as a redirection. */
function checkWriteArg(inv: Invocation, a: Arg) {
  checkWrite(a, inv.scope, inv.flag)
}

/** Force-pushing main (or mirroring, or deleting main) loses others' history: destructive. Any push is dangerous. */
function push(inv: Invocation, rest: Arg[]) {
  const [, ...refspecs] = operands(rest, { valued: ['--repo', '-o', '--push-option', '--receive-pack', '--exec'] })
  const refs = values(refspecs) ?? []
  const force = hasFlag(rest, 'f', ['--force', '--force-with-lease', '--force-if-includes']) || refs.some((r) => r.startsWith('+'))
  const main = refs.find(isMain)
  if (hasFlag(rest, '', ['--mirror'])) return inv.flag('destructive', 'mirror push (overwrites and deletes remote branches)')
  if (main && (hasFlag(rest, 'd', ['--delete']) || main.startsWith(':'))) return inv.flag('destructive', `deletes the remote ${quote(main, 24)} branch`)
  if (force && (main || hasFlag(rest, '', ['--all', '--branches']))) return inv.flag('destructive', `force-pushes ${quote(main ?? 'every branch', 24)} (rewrites shared history)`)
  inv.flag('dangerous', force ? 'force-pushes (rewrites remote history)' : 'publishes commits (network)')
}

function isMain(refspec: string): boolean {
  const dst = refspec.replace(/^\+/, '').split(':').pop() ?? ''
  return MAIN_BRANCHES.has(dst.replace(/^refs\/heads\//, '').toLowerCase())
}

export const gitRules: Record<string, Rule> = { git }
