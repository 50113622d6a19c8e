// git: reading history and working on the local repository is safe; discarding uncommitted work, rewriting or
// deleting refs, changing config and any network operation (push, pull, fetch, clone) is dangerous; a force
// push to the main branch (or a mirror push, or deleting main) is destructive.
import type { Arg, Invocation } from '../scope'
import { quote } from '../verdict'
import { hasFlag, operands, values } from './args'
import { readArgs } from './basic'
import type { Rule } from './rule'

const READS = new Set([
  'status', 'log', 'diff', 'show', 'rev-parse', 'ls-files', 'ls-tree', 'cat-file', 'blame', 'annotate', 'describe',
  'shortlog', 'whatchanged', 'name-rev', 'rev-list', 'merge-base', 'show-ref', 'for-each-ref', 'count-objects',
  'version', 'help', 'check-ignore', 'check-attr', 'diff-tree', 'diff-files', 'diff-index', 'cherry', 'range-diff',
  'show-branch', 'var', 'verify-commit', 'verify-tag', 'grep',
])
const LOCAL_WORK = new Set(['add', 'commit', 'init', 'mv', 'switch', 'merge', 'rebase', 'cherry-pick', 'revert', 'apply', 'am', 'format-patch', 'notes', 'sparse-checkout', 'bundle'])
const NETWORK = new Set(['clone', 'fetch', 'pull', 'ls-remote', 'submodule', 'send-email', 'request-pull', 'daemon', 'svn', 'p4', 'http-fetch', 'http-push', 'remote-ext'])
const HISTORY_REWRITE = new Set(['gc', 'prune', 'filter-branch', 'filter-repo', 'update-ref', 'replace', 'reflog-expire', 'prune-packed', 'repack'])
const MAIN_BRANCHES = new Set(['main', 'master', 'trunk', 'production'])

// Options of git itself before the subcommand; those that set configuration can make git run any program.
const CONFIG_OPTIONS = /^(-c|--config-env|--exec-path|--git-dir|--work-tree)(=|$)/

const git: Rule = (inv) => {
  let i = 0
  for (; i < inv.args.length; i++) {
    const v = inv.args[i].value
    if (v === undefined) return inv.flag('dangerous', 'runs a git command known only at run time')
    if (CONFIG_OPTIONS.test(v)) return inv.flag('dangerous', `overrides git configuration (${quote(v, 24)})`)
    if (v === '--version' || v === '--help') return inv.allow()
    if (v === '-C' || v === '--namespace') i++
    else if (!v.startsWith('-')) break
  }
  const sub = inv.args[i]?.value?.toLowerCase()
  const rest = inv.args.slice(i + 1)
  if (!sub) return inv.allow()
  const rule = SUBCOMMANDS[sub]
  if (rule) return rule(inv, rest)
  if (READS.has(sub)) {
    if (hasFlag(rest, 'O', ['--open-files-in-pager', '--ext-diff'])) return inv.flag('dangerous', 'runs an external program')
    return paths(inv, rest)
  }
  if (LOCAL_WORK.has(sub)) return paths(inv, rest)
  if (NETWORK.has(sub)) return inv.flag('dangerous', `network access (git ${sub})`)
  if (HISTORY_REWRITE.has(sub)) return inv.flag('dangerous', `rewrites or prunes history (git ${sub})`)
  inv.flag('dangerous', `unknown git command (${quote(sub, 24)})`)
}

/** Safe, unless a path it names is a secret (`git add .env`, `git show HEAD -- .env`). */
function paths(inv: Invocation, rest: Arg[]) {
  readArgs(inv, operands(rest, { valued: ['-m', '-F', '-C', '-c', '--message', '--file', '--author', '--date', '-x', '--exec', '-s', '--strategy', '-X', '--strategy-option', '-b', '-B', '-c', '-n', '--max-count'] }))
  inv.allow()
}

const discards = (inv: Invocation) => inv.flag('dangerous', 'discards uncommitted changes')

const SUBCOMMANDS: Record<string, (inv: Invocation, rest: Arg[]) => void> = {
  checkout: (inv, rest) => (rest.some((a) => a.value === '--' || a.value === '.') || hasFlag(rest, 'fp', ['--force', '--patch'], { valued: ['-b', '-B'] }) ? discards(inv) : paths(inv, rest)),
  restore: (inv, rest) => (hasFlag(rest, 'S', ['--staged']) && !hasFlag(rest, 'W', ['--worktree']) ? paths(inv, rest) : discards(inv)),
  reset: (inv, rest) => (hasFlag(rest, '', ['--hard', '--merge', '--keep']) ? discards(inv) : paths(inv, rest)),
  clean: (inv, rest) => (hasFlag(rest, 'n', ['--dry-run']) ? inv.allow() : inv.flag('dangerous', 'deletes untracked files')),
  rm: (inv, rest) => (hasFlag(rest, '', ['--cached']) ? paths(inv, rest) : inv.flag('dangerous', 'deletes files')),
  stash: (inv, rest) => (['drop', 'clear'].includes(rest[0]?.value ?? '') ? inv.flag('dangerous', 'drops stashed changes') : inv.allow()),
  branch: (inv, rest) => (hasFlag(rest, 'dDMf', ['--delete', '--force']) ? inv.flag('dangerous', 'deletes or overwrites branches') : inv.allow()),
  tag: (inv, rest) => (hasFlag(rest, 'df', ['--delete', '--force'], { valued: ['-m', '-F', '-u'] }) ? inv.flag('dangerous', 'deletes or moves tags') : inv.allow()),
  reflog: (inv, rest) => (['expire', 'delete', 'drop'].includes(rest[0]?.value ?? '') ? inv.flag('dangerous', 'prunes the reflog') : inv.allow()),
  worktree: (inv, rest) => (['remove', 'prune'].includes(rest[0]?.value ?? '') ? inv.flag('dangerous', 'removes worktrees') : inv.allow()),
  config: (inv, rest) => {
    const ops = operands(rest)
    const reads = hasFlag(rest, 'l', ['--get', '--get-all', '--get-regexp', '--list', '--get-urlmatch', '--show-origin']) || ['get', 'list'].includes(ops[0]?.value ?? '') || ops.length === 1
    if (reads) return inv.allow()
    inv.flag('dangerous', 'changes git configuration (can make git run programs)')
  },
  remote: (inv, rest) => {
    const verb = operands(rest)[0]?.value
    if (verb === undefined || verb === 'show' || verb === 'get-url') return inv.allow()
    inv.flag('dangerous', 'changes remotes')
  },
  bisect: (inv, rest) => {
    if (rest[0]?.value !== 'run') return inv.allow()
    inv.allow()
    inv.run(rest.slice(1))
  },
  rebase: (inv, rest) => {
    const exec = rest.findIndex((a) => a.value === '-x' || a.value === '--exec')
    if (exec >= 0) {
      const cmd = rest[exec + 1]?.value
      if (cmd === undefined) return inv.flag('dangerous', 'runs a command known only at run time')
      inv.runScript(cmd)
    }
    paths(inv, rest)
  },
  push,
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
