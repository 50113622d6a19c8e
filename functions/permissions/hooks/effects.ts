// What touching a path means, shared by redirections and the commands that read, write or delete files.
import { blockDevice, broadPath, DYNAMIC, NONEMPTY, globSecret, harmlessDevice, inWorkspace, networkDevice, osPath, resolvePath, secretPart, sensitiveWritePart, tempPath, withoutDynamicParts } from './paths'
import type { Arg, Scope } from './scope'
import { quote, type ToolTier } from './verdict'

export type Flag = (tier: ToolTier, why: string) => void

/** Where an argument points, normalised against the working directory the script is in. */
export function pathOf(arg: Arg, scope: Scope): string {
  return resolvePath(arg.shape, scope.cwd)
}

/** Reading a secret (`.env`, `~/.ssh/…`, `/etc/shadow`, `/proc/self/environ`), a raw disk, or a network socket. */
export function checkRead(arg: Arg, scope: Scope, flag: Flag) {
  if (arg.process) return
  const path = pathOf(arg, scope)
  const secret = secretPart(path) ?? globSecret(path)
  if (secret) return flag('dangerous', `reads a sensitive path (${quote(secret)})`)
  if (networkDevice(path)) return flag('dangerous', 'opens a network connection (/dev/tcp)')
  if (blockDevice(path)) flag('dangerous', `reads a raw device (${quote(path)})`)
}

/**
 * Writing: fine inside the working directory, in /tmp and to the null device and standard streams; dangerous
 * anywhere else, to sensitive paths, or where the path is only known at run time; destructive on a block device.
 */
export function checkWrite(arg: Arg, scope: Scope, flag: Flag) {
  if (arg.process) return
  const path = pathOf(arg, scope)
  if (blockDevice(path)) return flag('destructive', `writes to a block device (${quote(path)})`)
  if (networkDevice(path)) return flag('dangerous', 'opens a network connection (/dev/tcp)')
  if (harmlessDevice(path)) return
  const sensitive = sensitiveWritePart(path) ?? globSecret(path)
  if (sensitive) return flag('dangerous', `writes a sensitive path (${quote(sensitive)})`)
  if (arg.value === undefined || path.includes(DYNAMIC)) return flag('dangerous', `writes a path known only at run time (${quote(arg.text)})`)
  if (tempPath(path)) return
  if (!inWorkspace(path) || scope.cwd === null) flag('dangerous', `writes outside the working directory (${quote(path)})`)
}

/**
 * A deletion (or recursive permission change) whose target is catastrophic: see broadPath. Also when an empty
 * variable would make it so (`rm -rf "$DIR/"`, `"$DIR"/*`): `${DIR:?}` guards against that and is not flagged.
 */
export function broadTarget(arg: Arg, scope: Scope): string | undefined {
  if (arg.process) return undefined
  const path = pathOf(arg, scope)
  if (broadPath(path)) return quote(path.includes(DYNAMIC) || path.includes(NONEMPTY) ? arg.text : path)
  const collapsed = withoutDynamicParts(arg.shape)
  if (collapsed === undefined || collapsed === '') return undefined
  const empty = resolvePath(collapsed, scope.cwd)
  return wipe(empty) ? `${quote(arg.text, 32)} (${empty} when empty)` : undefined
  return undefined
}

/** The root, a home, or everything in the working directory, with nothing or only wildcards after it. */
function wipe(path: string): boolean {
  return /^(\/|~[^/]*(\/|$)|\.$)[*?.]*$/.test(path) || /^[*?.]+$/.test(path)
}

/** Under the operating system's trees. */
export function osTarget(arg: Arg, scope: Scope): string | undefined {
  const path = pathOf(arg, scope)
  return osPath(path) && !harmlessDevice(path) && !tempPath(path) ? path : undefined
}
