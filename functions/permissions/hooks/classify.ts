// The tool-call classifier behind the permission hook. Deterministic, synchronous, bounded (see LIMITS in
// functions/permissions/hooks/scope.ts), Workers-safe (unbash is pure TypeScript).
//
// Tools (names compared case-insensitively):
// - `read`, `file_read`: safe.
// - `write`, `file_write` (path in `path`, `file_path` or `filePath`): dangerous for sensitive paths, else safe.
//   The path is checked as written and URL-decoded, with backslashes as separators, `file://` removed, `$HOME`,
//   `${HOME}` and `~` as the home, `.`/`..`/repeated slashes resolved, case-insensitively. Sensitive: secrets
//   (`.env`, `.env.*` except templates like `.env.example`, `.envrc`, `credentials*`, `.ssh/`, `.aws/`, `.gnupg/`,
//   `.kube/`, `.docker/`, `id_rsa*`, `*.pem`, `*.key`, `.npmrc`, `.netrc`, `.pgpass`…), shell start-up files
//   (`.bashrc`, `.profile`…), `.gitconfig`, anything under `.git` (or a `.git` file), `HEAD` (with `objects/` and
//   `refs/` it makes a directory a repository whose `config` git obeys), autostart locations, the operating
//   system's trees (`/etc`, `/usr/bin`, `/boot`…), and any relative path that climbs out of the workspace. A block
//   device (`/dev/sda`) is destructive. Absolute paths elsewhere are the tool's normal form: safe.
// - `bash`, `exec`, `shell` (command in `command`, `cmd` or `script`): parsed as Bash parses it; every part is
//   classified and the strictest tier wins. Over 10 000 characters, unparsable, or nested beyond the bound:
//   dangerous.
// - Anything else: dangerous.
//
// Shell tiers (rules per command in functions/permissions/hooks/commands/):
// - safe: an allowlist of programs, each with the options known to be harmless for it (functions/permissions/hooks/commands/
//   options.ts; the way Codex's is_safe_command works): ls, cat, grep, rg, find, head, wc, sed/awk without side
//   effects, jq, git status/log/diff/show/blame/grep/add, cp/mv/mkdir/touch/tee inside the workspace, `tsc --noEmit`,
//   `go build`, formatters whose configuration cannot name code… Any option not in the program's table (`rg --pre`,
//   `sort --compress-program`, `git log --output`, `tar --to-command`, `zip -TT`, and abbreviations of long options)
//   and any word known only at run time that could be an option (`$x`, `*`, what xargs reads) in front of a program
//   with such options makes the command dangerous. A command whose rule does not allow it is dangerous (safe is
//   earned). Nothing that runs code the agent can write is safe: package scripts (`npm test`, `npm run build`),
//   make, test runners, bundlers and linters whose config is code, `python -m`, cargo, and git commands that run
//   hooks (commit, merge, rebase, checkout, switch, and every ref update: branch, tag, stash, reset). Pagers (less,
//   man) can run commands. Redirections are safe inside the working directory, /tmp or the null device. `bash -c
//   '<literal>'` is as safe as its script.
// - dangerous: any command not on the allowlist; network clients (curl, wget, nc, ssh, scp…) and any network
//   git operation (push, pull, fetch, clone); fetching code and running it (`curl … | sh`, `sh <(curl …)`):
//   dangerous rather than destructive, because the approver sees the address and an installer may be wanted;
//   a script piped into a shell or evaluated (`… | sh`, `base64 -d | sh`, `eval`, `source`), even when its
//   decoded content is harmless; sudo/doas/su; package installs; `rm`, `rmdir`, `chmod`, `chown`, `kill`,
//   `crontab`; git commands that discard work or rewrite refs; writes outside the working directory, to
//   sensitive paths, or to paths known only at run time; reading secrets (`cat .env`, `~/.ssh/…`,
//   `/etc/shadow`, `$AWS_SECRET_ACCESS_KEY`, `printenv`/`env`/`export -p`/`set` alone); a command name only known at
//   run time (`$x`, `$(…)`); variables that change what runs or where programs read their configuration (PATH,
//   LD_PRELOAD, GIT_*, HOME, XDG_CONFIG_HOME…; a pager or editor variable is as safe as the command it holds);
//   values evaluated as code (arithmetic on a value known only at run time: bash expands array subscripts in it;
//   `${x@P}`); writes that make a repository (`.git`, `HEAD`) or links to paths the command could not write;
//   parse errors.
// - destructive: recursive deletion (or recursive chmod/chown) of the root, a top-level directory, a home, a
//   secrets directory, the system's trees, the whole working directory or above it (`rm -rf /`, `~`, `$HOME`,
//   `*`, `.`, `..`, `/etc`, and `"$DIR/"` or `"$DIR"/*` that an empty variable turns into `/`); deleting or
//   re-permissioning system files; `--no-preserve-root`; moving those paths away; `find / -delete`; rsync
//   `--delete` into them; mkfs/fdisk/wipefs/parted; `dd of=/dev/sdX` and any write to a block device; shred;
//   fork bombs; `kill -9 -1` and signalling pid 1; shutdown/reboot/halt/poweroff (`init 0`, `systemctl reboot`);
//   force-pushing main/master (or `--mirror`, or deleting main); SQL that drops or empties data through a
//   database client (`psql -c "DROP DATABASE …"`, `TRUNCATE`, `DELETE FROM t;`, `FLUSHALL`).
//
// Seen through: quotes and escapes in names (`'r'm`, `\rm`, `"rm"`, `$'\x72m'`), system paths (`/bin/rm`),
// case (`RM`), wrappers (env, sudo, doas, xargs, nice, nohup, timeout, time, command, builtin, exec, stdbuf,
// busybox, watch, ionice, chroot), `bash/sh/zsh -c`, `eval`, `su -c`, `ssh host cmd`, `trap`, `find -exec`,
// `git rebase -x`, variables assigned in the script, `${IFS}`, brace expansion, `$(echo …)`, `echo … | sh`,
// `base64 -d`/`xxd -r -p`/`rev` of known text, here-documents and here-strings into shells, `cd` before a
// relative path, functions (their bodies are classified where defined).
//
// `reason` names the part that decided (the first that reached the final tier), quoting at most a few dozen
// characters of the input.
import { classifyShellCommand } from './shell'
import { blockDevice, resolvePath, sensitiveWritePart, spellings } from './paths'
import { quote } from './verdict'
import type { ToolClassification, ToolTier } from './verdict'

export type { ToolClassification, ToolTier }

const SHELL_TOOLS = new Set(['bash', 'exec', 'shell'])
const WRITE_TOOLS = new Set(['write', 'file_write'])
const READ_TOOLS = new Set(['read', 'file_read'])

/** Classifies one tool call. */
export function classifyToolCall(toolName: string, toolInput: Record<string, unknown>): ToolClassification {
  const tool = toolName.toLowerCase()
  if (READ_TOOLS.has(tool)) return { tier: 'safe', reason: 'Reading files is allowed' }
  if (WRITE_TOOLS.has(tool)) return classifyWrite(firstString(toolInput, ['path', 'file_path', 'filePath']))
  if (SHELL_TOOLS.has(tool)) {
    const command = firstString(toolInput, ['command', 'cmd', 'script'])
    if (command === undefined || !command.trim()) return { tier: 'dangerous', reason: 'Shell call without a command' }
    return classifyShellCommand(command)
  }
  return { tier: 'dangerous', reason: `Unknown tool (${quote(toolName, 32)})` }
}

function firstString(input: Record<string, unknown>, keys: string[]): string | undefined {
  for (const key of keys) if (typeof input?.[key] === 'string') return input[key] as string
  return undefined
}

/** A file write: dangerous on sensitive paths under any spelling, destructive on a block device, else safe. */
export function classifyWrite(path: string | undefined): ToolClassification {
  if (path === undefined || !path.trim()) return { tier: 'dangerous', reason: 'Write without a path' }
  if (path.includes('\u0000')) return { tier: 'dangerous', reason: 'Write path contains a NUL byte' }
  for (const spelling of spellings(path)) {
    const resolved = resolvePath(spelling.replace(/^(\$HOME|\$\{HOME\})(?=\/|$)/, '~'), '.')
    if (blockDevice(resolved)) return { tier: 'destructive', reason: `Writes a block device (${quote(resolved)})` }
    const sensitive = sensitiveWritePart(resolved)
    if (sensitive) return { tier: 'dangerous', reason: `Writes a sensitive path (${quote(sensitive)})` }
    if (resolved === '..' || resolved.startsWith('../')) return { tier: 'dangerous', reason: `Writes outside the workspace (${quote(resolved)})` }
  }
  return { tier: 'safe', reason: 'Writes an ordinary path' }
}
