// Commands that delete, wipe, re-permission, kill or power off. Each is at least dangerous; destructive when its
// target is catastrophic (see broadPath in functions/permissions/hooks/paths.ts) or the act cannot be undone (mkfs, shred…).
import { blockDevice } from '../paths'
import { broadTarget, checkRead, checkWrite, osTarget, pathOf } from '../effects'
import { literalArg, unknownArg, type Arg } from '../scope'
import { quote } from '../verdict'
import { hasFlag, operands, optionValues } from './args'
import { readArgs } from './basic'
import { mayBeOption } from './options'
import type { Rule } from './rule'

const rm: Rule = (inv) => {
  const recursive = hasFlag(inv.args, 'rR', ['--recursive'])
  if (inv.args.some((a) => a.value === '--no-preserve-root')) return inv.flag('destructive', 'deletes with --no-preserve-root')
  for (const target of operands(inv.args)) {
    const broad = broadTarget(target, inv.scope)
    if (broad && recursive) return inv.flag('destructive', `deletes ${broad} recursively`)
    // Without -r: system files, or every file of the root or a home (`rm ~/*`).
    const system = osTarget(target, inv.scope) ?? (broad && /^[/~]/.test(pathOf(target, inv.scope)) ? broad : undefined)
    if (system) return inv.flag('destructive', `deletes system files (${quote(system)})`)
  }
  inv.flag('dangerous', recursive ? 'deletes files recursively' : 'deletes files')
}

/** Deletion wrappers that run rm-like programs: find -delete / -exec rm with a catastrophic start is destructive. */
const DELETERS = new Set(['rm', 'shred', 'unlink', 'srm', 'rmdir'])
const FILTERS = new Set([
  '-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-empty', '-mtime', '-mmin',
  '-atime', '-amin', '-ctime', '-cmin', '-newer', '-size', '-user', '-group', '-perm', '-lname', '-ilname', '-inum',
  '-samefile', '-links', '-uid', '-gid', '-nouser', '-nogroup',
])
// find's primaries, with how many words each takes. Not listed: -fprint*/-fls/-exec*/-ok*/-delete (handled below)
// and anything else (an unknown primary is dangerous).
const FIND_PRIMARIES = new Map<string, number>([
  ...['-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-regextype', '-type', '-xtype', '-size',
    '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin', '-newer', '-anewer', '-cnewer', '-perm', '-user', '-group', '-uid', '-gid',
    '-links', '-inum', '-samefile', '-lname', '-ilname', '-fstype', '-used', '-maxdepth', '-mindepth', '-printf', '-context', '-flags',
    '-files0-from', '-Bmin', '-Bnewer', '-Btime'].map((p) => [p, 1] as const),
  ...['-empty', '-nouser', '-nogroup', '-readable', '-writable', '-executable', '-false', '-true', '-depth', '-d', '-xdev', '-mount',
    '-follow', '-noleaf', '-ignore_readdir_race', '-noignore_readdir_race', '-daystart', '-warn', '-nowarn', '-print', '-print0',
    '-ls', '-prune', '-quit', '-not', '-a', '-o', '-and', '-or', '!', '(', ')', ',', '-nouser', '-nogroup', '-delete'].map((p) => [p, 0] as const),
])
// Options before the start directories (GNU -H -L -P -D -O; BSD -E -X -d -s -x -f).
const FIND_LEADING = /^-([HLPEXdsx]+|O\d|D)$/

const find: Rule = (inv) => {
  const args = inv.args
  let i = 0
  for (; i < args.length && args[i].value !== undefined && FIND_LEADING.test(args[i].value as string); i++) if (args[i].value === '-D' || args[i].value === '-f') i++
  const roots: Arg[] = []
  for (; i < args.length && !(args[i].value !== undefined && /^[-(!)]/.test(args[i].value as string) && args[i].value !== '-'); i++) {
    if (mayBeOption(args[i])) inv.flag('dangerous', `a word known only at run time may be an option (${quote(args[i].text, 32)})`)
    roots.push(args[i])
  }
  const expr = args.slice(i)
  let deletes = false
  let filtered = false
  for (let k = 0; k < expr.length; k++) {
    const v = expr[k].value
    if (v === undefined) {
      inv.flag('dangerous', `a word known only at run time may be a primary (${quote(expr[k].text, 32)})`)
      continue
    }
    if (FILTERS.has(v)) filtered = true
    if (v === '-delete') deletes = true
    else if (v === '-exec' || v === '-execdir' || v === '-ok' || v === '-okdir') {
      const end = expr.findIndex((a, n) => n > k && (a.value === ';' || a.value === '+'))
      // `{}` is a found path: under a start directory, never an option.
      const inner = expr.slice(k + 1, end < 0 ? expr.length : end).map((a) => (a.value?.includes('{}') ? { ...unknownArg(a.text), operand: true } : a))
      if (inner[0]?.value && DELETERS.has(inner[0].value.split('/').pop() as string)) deletes = true
      inv.run(inner)
      k = end < 0 ? expr.length : end
    } else if (v === '-fprint' || v === '-fprint0' || v === '-fls') checkWrite(expr[++k] ?? unknownArg(v), inv.scope, inv.flag)
    else if (v === '-fprintf') {
      checkWrite(expr[++k] ?? unknownArg(v), inv.scope, inv.flag)
      k++
    } else if (/^-newer[aBcmt]{2}$/.test(v)) k++
    else if (FIND_PRIMARIES.has(v)) {
      const n = FIND_PRIMARIES.get(v) as number
      if (n && ['-name', '-iname', '-path', '-ipath', '-wholename', '-files0-from'].includes(v)) readArgs(inv, [expr[k + 1]].filter(Boolean))
      k += n
    } else inv.flag('dangerous', `option not known to be harmless (${quote(v, 32)})`)
  }
  readArgs(inv, roots)
  if (deletes) {
    // With a test that picks files (-name, -mtime…) it deletes some of them, not everything.
    const broad = filtered ? undefined : (roots.length ? roots : [literalArg('.')]).map((r) => broadTarget(r, inv.scope)).find(Boolean)
    if (broad) return inv.flag('destructive', `deletes everything under ${broad}`)
    return inv.flag('dangerous', 'deletes files')
  }
  inv.allow()
}

/** chmod/chown/chgrp: dangerous; recursive on a catastrophic target, or on the system's trees, destructive. */
function permissions(what: string): Rule {
  return (inv) => {
    const recursive = hasFlag(inv.args, 'R', ['--recursive'])
    const reference = optionValues(inv.args, ['--reference']).length > 0
    const targets = operands(inv.args).slice(reference ? 0 : 1)
    for (const target of targets) {
      const broad = broadTarget(target, inv.scope)
      if (broad && recursive) return inv.flag('destructive', `changes ${what} of ${broad} recursively`)
      const system = osTarget(target, inv.scope)
      if (system) return inv.flag('destructive', `changes ${what} of system files (${quote(system)})`)
    }
    inv.flag('dangerous', `changes ${what}`)
  }
}

const dd: Rule = (inv) => {
  for (const a of inv.args) {
    const v = a.value
    if (v === undefined) continue
    const target: Arg = { ...a, value: v.slice(3), shape: a.shape.slice(3) }
    if (v.startsWith('of=')) {
      if (blockDevice(pathOf(target, inv.scope))) return inv.flag('destructive', `overwrites a block device (${quote(target.value ?? '')})`)
      checkWrite(target, inv.scope, inv.flag)
    } else if (v.startsWith('if=')) checkRead(target, inv.scope, inv.flag)
  }
  inv.flag('dangerous', 'copies raw data')
}

/** `kill -9 -1` signals every process; pid 1 is init. */
const kill: Rule = (inv) => {
  const a = inv.args
  const first = a[0]?.value
  if (first === '-l' || first === '-L') return inv.allow()
  let i = first === '-s' || first === '-n' || first === '--signal' ? 2 : first?.startsWith('-') && first !== '--' && a.length > 1 ? 1 : 0
  if (a[i]?.value === '--') i++
  const targets = a.slice(i).map((t) => t.value)
  if (targets.includes('-1')) return inv.flag('destructive', 'signals every process (-1)')
  if (targets.includes('1')) return inv.flag('destructive', 'signals init (pid 1)')
  inv.flag('dangerous', 'signals processes')
}

const destroy = (why: string): Rule => (inv) => inv.flag('destructive', why)
const risky = (why: string): Rule => (inv) => inv.flag('dangerous', why)

/** `init 0`, `systemctl poweroff`, `launchctl reboot`…: destructive only for the verbs that stop the machine. */
function powerVerbs(verbs: RegExp, why: string): Rule {
  return (inv) => (inv.args.some((a) => a.value !== undefined && verbs.test(a.value)) ? inv.flag('destructive', why) : inv.flag('dangerous', 'manages the system'))
}

const FORMATTERS = ['mkfs', 'mke2fs', 'mkswap', 'newfs', 'newfs_apfs', 'newfs_hfs', 'wipefs', 'fdisk', 'sfdisk', 'gdisk', 'sgdisk', 'cfdisk', 'parted', 'blkdiscard']
const FILESYSTEMS = ['ext2', 'ext3', 'ext4', 'xfs', 'btrfs', 'vfat', 'fat', 'msdos', 'ntfs', 'exfat', 'f2fs', 'minix', 'hfsplus', 'apfs']

export const destructiveRules: Record<string, Rule> = {
  rm,
  find,
  dd,
  kill,
  rmdir: (inv) => {
    readArgs(inv)
    inv.flag('dangerous', 'deletes directories')
  },
  unlink: (inv) => {
    const [target] = operands(inv.args)
    const system = target && osTarget(target, inv.scope)
    inv.flag(system ? 'destructive' : 'dangerous', system ? `deletes system files (${quote(system)})` : 'deletes files')
  },
  shred: destroy('overwrites files beyond recovery'),
  srm: destroy('overwrites files beyond recovery'),
  wipe: destroy('overwrites files beyond recovery'),
  ...Object.fromEntries(FORMATTERS.map((n) => [n, destroy('formats or repartitions a disk')])),
  ...Object.fromEntries(FILESYSTEMS.map((fs) => [`mkfs.${fs}`, destroy('formats a disk')])),
  diskutil: powerVerbs(/^(erase|zero|secureerase|partitiondisk|reformat|randomdisk)/i, 'erases a disk'),
  chmod: permissions('permissions'),
  chown: permissions('ownership'),
  chgrp: permissions('group ownership'),
  chattr: risky('changes file attributes'),
  killall: risky('stops processes'),
  pkill: risky('stops processes'),
  killall5: destroy('signals every process'),
  shutdown: destroy('shuts the machine down'),
  reboot: destroy('reboots the machine'),
  halt: destroy('halts the machine'),
  poweroff: destroy('powers the machine off'),
  init: powerVerbs(/^[06]$/, 'halts or reboots the machine'),
  telinit: powerVerbs(/^[06]$/, 'halts or reboots the machine'),
  systemctl: powerVerbs(/^(poweroff|reboot|halt|kexec|emergency|rescue|soft-reboot)$/, 'stops or reboots the machine'),
  launchctl: powerVerbs(/^reboot$/, 'reboots the machine'),
  service: risky('manages services'),
  crontab: risky('changes scheduled jobs'),
  at: risky('schedules commands'),
  batch: risky('schedules commands'),
}
