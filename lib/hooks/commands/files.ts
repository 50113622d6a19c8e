// Commands that write files: safe inside the working directory (and /tmp), dangerous elsewhere or on sensitive
// paths, destructive on block devices or when moving a catastrophic path away.
import { broadTarget, checkRead, checkWrite } from '../effects'
import type { Arg, Invocation } from '../scope'
import { quote } from '../verdict'
import { hasFlag, operands, optionValues, type OptionSpec } from './args'
import type { Rule } from './rule'

const write = (inv: Invocation, args: Arg[]) => args.forEach((a) => checkWrite(a, inv.scope, inv.flag))
const read = (inv: Invocation, args: Arg[]) => args.forEach((a) => checkRead(a, inv.scope, inv.flag))

/** Every operand is written (touch, mkdir, tee, truncate…). */
function writesOperands(spec: OptionSpec = {}): Rule {
  return (inv) => {
    write(inv, operands(inv.args, spec))
    inv.allow()
  }
}

/** `cp src… dest` / `cp -t dest src…`: sources read, destination written. `moves`: sources are removed too (mv). */
function copy(moves: boolean): Rule {
  const spec: OptionSpec = { valued: ['-t', '--target-directory', '-S', '--suffix'] }
  return (inv) => {
    const targetDir = optionValues(inv.args, ['-t', '--target-directory'])
    const ops = operands(inv.args, spec)
    const dest = targetDir.length ? targetDir : ops.slice(-1)
    const sources = targetDir.length ? ops : ops.slice(0, -1)
    for (const s of moves ? sources : []) {
      const broad = broadTarget(s, inv.scope)
      if (broad) return inv.flag('destructive', `moves ${broad} away`)
    }
    ;(moves ? write : read)(inv, sources)
    write(inv, dest)
    inv.allow()
  }
}

/** `ln [-s] target… link`: the link is written; linking a secret to an ordinary name is reading it. */
const link: Rule = (inv) => {
  const ops = operands(inv.args, { valued: ['-t', '--target-directory', '-S', '--suffix'] })
  const dir = optionValues(inv.args, ['-t', '--target-directory'])
  read(inv, dir.length ? ops : ops.slice(0, -1))
  write(inv, dir.length ? dir : ops.slice(-1))
  inv.allow()
}

/** tar: create reads operands and writes the archive; extract reads the archive and writes into -C (or here). */
const tar: Rule = (inv) => {
  const args = inv.args
  // The old form's first word is a cluster without a dash: `tar czf out.tgz dir`.
  const cluster = args[0]?.value && !args[0].value.startsWith('-') ? args[0].value : ''
  const has = (letter: string, long: string) => cluster.includes(letter) || hasFlag(args, letter, [long], { valued: ['-f', '-C', '-b', '-T', '-X'] })
  if (args.some((a) => a.value === undefined || /^--(to-command|use-compress-program|checkpoint-action|rsh-command|info-script|new-volume-script)|^-I$/.test(a.value)))
    return inv.flag('dangerous', 'runs a command while archiving')
  const archive = cluster.includes('f') ? args.slice(1, 2) : optionValues(args, ['-f', '--file'])
  const dirs = optionValues(args, ['-C', '--directory'])
  const rest = operands(cluster ? args.slice(cluster.includes('f') ? 2 : 1) : args, { valued: ['-f', '-C', '-b', '-T', '-X', '--file', '--directory'] })
  if (has('x', '--extract') || has('x', '--get')) {
    read(inv, archive)
    write(inv, dirs.length ? dirs : [{ value: '.', shape: '.', glob: false, expanded: false, text: '.' }])
  } else if (has('c', '--create') || has('r', '--append') || has('u', '--update')) {
    write(inv, archive)
    read(inv, rest)
  } else read(inv, archive)
  inv.allow()
}

/** gzip & co. replace their operands in place, unless writing to stdout or only testing/listing. */
const compressor: Rule = (inv) => {
  if (!hasFlag(inv.args, 'ctl', ['--stdout', '--to-stdout', '--test', '--list'])) write(inv, operands(inv.args, { valued: ['-S', '--suffix'] }))
  else read(inv, operands(inv.args))
  inv.allow()
}

const zip: Rule = (inv) => {
  const [archive, ...files] = operands(inv.args, { valued: ['-x', '-i', '-b', '-n', '-t', '-tt', '-P'] })
  if (archive) write(inv, [archive])
  read(inv, files)
  inv.allow()
}

const unzip: Rule = (inv) => {
  const [archive] = operands(inv.args, { valued: ['-d', '-x', '-P'] })
  if (archive) read(inv, [archive])
  if (!hasFlag(inv.args, 'lpt')) {
    const dirs = optionValues(inv.args, ['-d'])
    write(inv, dirs.length ? dirs : [{ value: '.', shape: '.', glob: false, expanded: false, text: '.' }])
  }
  inv.allow()
}

/** rsync: to or from another host is network access; `--delete` into a catastrophic destination is destructive. */
const rsync: Rule = (inv) => {
  const ops = operands(inv.args, { valued: ['-e', '--rsh', '-f', '--filter', '--exclude', '--include', '--exclude-from', '--include-from', '--files-from', '-T', '--temp-dir', '--backup-dir', '--partial-dir', '--log-file'] })
  if (ops.some((a) => a.value === undefined || /^[^/]*:|^rsync:\/\//.test(a.value))) return inv.flag('dangerous', 'copies over the network')
  const dest = ops.slice(-1)
  if (inv.args.some((a) => a.value?.startsWith('--delete'))) {
    const broad = dest.map((d) => broadTarget(d, inv.scope)).find(Boolean)
    if (broad) return inv.flag('destructive', `deletes what is not in the source from ${broad}`)
  }
  read(inv, ops.slice(0, -1))
  write(inv, dest)
  inv.allow()
}

const patch: Rule = (inv) => {
  write(inv, [...optionValues(inv.args, ['-o', '--output', '-d', '--directory']), ...operands(inv.args, { valued: ['-p', '-i', '-o', '-d', '-r', '-B', '-F', '-D', '--input', '--output', '--directory'] }).slice(0, 1)])
  read(inv, optionValues(inv.args, ['-i', '--input']))
  inv.allow()
}

export const fileRules: Record<string, Rule> = {
  cp: copy(false),
  install: copy(false),
  mv: copy(true),
  ln: link,
  touch: writesOperands({ valued: ['-d', '-r', '-t', '--date', '--reference'] }),
  mkdir: writesOperands({ valued: ['-m', '--mode'] }),
  tee: writesOperands(),
  truncate: writesOperands({ valued: ['-s', '-r', '--size', '--reference'] }),
  mkfifo: writesOperands({ valued: ['-m'] }),
  tar,
  gtar: tar,
  bsdtar: tar,
  zip,
  unzip,
  gzip: compressor,
  gunzip: compressor,
  bzip2: compressor,
  bunzip2: compressor,
  xz: compressor,
  unxz: compressor,
  zstd: compressor,
  unzstd: compressor,
  zcat: (inv) => {
    read(inv, operands(inv.args))
    inv.allow()
  },
  patch,
  rsync,
}
