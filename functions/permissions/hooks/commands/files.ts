// Commands that write files: safe inside the working directory (and /tmp), dangerous elsewhere or on sensitive
// paths, destructive on block devices or when moving a catastrophic path away. Their option tables leave out what
// runs programs (tar --to-command, zip -TT, rsync -e, install --strip-program), deletes (tar --remove-files,
// zip -m) or escapes the destination (tar -P, unzip -:).
import { broadTarget, checkRead, checkWrite } from '../effects'
import { resolvePath } from '../paths'
import { literalArg, type Arg, type Invocation } from '../scope'
import { options, parseOptions, type OptionTable } from './options'
import type { Rule } from './rule'

const write = (inv: Invocation, args: Arg[]) => args.forEach((a) => checkWrite(a, inv.scope, inv.flag))
const read = (inv: Invocation, args: Arg[]) => args.forEach((a) => checkRead(a, inv.scope, inv.flag))

/** Every operand is written (touch, mkdir, tee, truncate…). */
function writesOperands(table: OptionTable): Rule {
  return (inv) => {
    write(inv, parseOptions(inv, table).operands)
    inv.allow()
  }
}

const CP = options(
  '-a -b -d -f -H -i -l -L -n -P -p -R -r -s -T -u -v -x -Z -c -S: -t:w --archive --attributes-only --backup= --copy-contents --debug ' +
    '--dereference --force --interactive --link --no-clobber --no-dereference --no-preserve= --no-target-directory --one-file-system ' +
    '--parents --preserve= --recursive --reflink= --remove-destination --sparse= --strip-trailing-slashes --suffix: --symbolic-link ' +
    '--target-directory:w --update= --verbose --keep-directory-symlink',
)
const MV = options(
  '-b -f -i -n -T -u -v -Z -S: -t:w --backup= --debug --exchange --force --interactive --no-clobber --no-copy --no-target-directory ' +
    '--strip-trailing-slashes --suffix: --target-directory:w --update= --verbose',
)
// install -o/-g change owners, -s/--strip-program runs a program: not listed.
const INSTALL = options('-b -c -C -d -D -p -T -v -m: -S: -t:w --backup= --compare --directory --mode: --preserve-timestamps --suffix: --target-directory:w --no-target-directory --verbose')

/** `cp src… dest` / `cp -t dest src…`: sources read, destination written. `moves`: sources are removed too (mv). */
function copy(table: OptionTable, moves: boolean): Rule {
  return (inv) => {
    const parsed = parseOptions(inv, table)
    const targetDir = parsed.values('-t', '--target-directory')
    const ops = parsed.operands
    const sources = targetDir.length ? ops : ops.slice(0, -1)
    for (const s of moves ? sources : []) {
      const broad = broadTarget(s, inv.scope)
      if (broad) return inv.flag('destructive', `moves ${broad} away`)
    }
    read(inv, sources)
    // A moved source is removed; a hard or symbolic link to it (cp -l/-s) writes through to it later.
    if (moves || parsed.has('-l', '-s', '--link', '--symbolic-link')) write(inv, sources)
    if (!targetDir.length) write(inv, ops.slice(-1))
    inv.allow()
  }
}

const LN = options(
  '-b -d -F -f -i -L -n -P -r -s -T -v -h -S: -t:w --backup= --directory --force --interactive --logical --no-dereference ' +
    '--no-target-directory --physical --relative --suffix: --symbolic --target-directory:w --verbose',
)

/**
 * `ln [-s] target… link`: the link is written, and what it points to can be written through it later
 * (`ln -s ~/.bashrc notes.txt; echo … >> notes.txt`): a link to a path this command could not write is dangerous.
 * A symbolic link's relative target is read from the link's directory.
 */
const link: Rule = (inv) => {
  const parsed = parseOptions(inv, LN)
  const dir = parsed.values('-t', '--target-directory')
  const ops = parsed.operands
  const targets = dir.length ? ops : ops.length > 1 ? ops.slice(0, -1) : ops
  const linkAt = dir.length ? dir[0] : ops.length > 1 ? ops[ops.length - 1] : literalArg('.')
  const symbolic = parsed.has('-s', '--symbolic')
  for (const t of targets) {
    read(inv, [t])
    const relative = symbolic && !/^[/~]/.test(t.shape) && !parsed.has('-r', '--relative')
    const base = dir.length || ops.length > 2 ? linkAt.shape : linkAt.shape.replace(/\/?[^/]*\/?$/, '')
    checkWrite(relative ? { ...t, shape: resolvePath(`${base || '.'}/${t.shape}`, '.') } : t, inv.scope, (tier, why) => inv.flag(tier, `links to a path it could not write: ${why}`))
  }
  if (!dir.length && ops.length > 1) write(inv, ops.slice(-1))
  else write(inv, dir)
  inv.allow()
}

// tar: -P (absolute names), -I/--use-compress-program, -F/--info-script, -M, --to-command, --checkpoint-action,
// --rsh-command, --remove-files, --unlink-first, --recursive-unlink, --transform, --index-file: not listed.
const TAR = options(
  '-c -x -t -r -u -A -z -j -J -Z -a -v -k -m -o -p -O -h -f: -C: -T:r -X:r --create --extract --get --list ' +
  '--append --update --delete --file: --directory: --gzip --gunzip --ungzip --bzip2 --xz --lzma --zstd --compress ' +
  '--uncompress --auto-compress --verbose --exclude: --exclude-from:r --exclude-vcs --files-from:r --null ' +
  '--no-null --strip-components: --wildcards --no-wildcards --anchored --no-anchored --ignore-case ' +
  '--keep-old-files --skip-old-files --overwrite --no-same-owner --no-same-permissions --preserve-permissions ' +
  '--same-permissions --numeric-owner --owner: --group: --mode: --mtime: --totals= --one-file-system --dereference ' +
  '--to-stdout --force-local --no-recursion --recursion --checkpoint=',
)
const TAR_VALUED = 'fCbTXKNLVHg'

/** tar: create reads operands and writes the archive; extract reads the archive and writes into -C (or here). */
const tar: Rule = (inv) => {
  // The old form's first word is a cluster without a dash, its letters' values following in order: `tar czf out.tgz dir`.
  let args = inv.args
  const first = args[0]?.value
  if (first && !first.startsWith('-') && /^[a-zA-Z]+$/.test(first)) {
    const expanded: Arg[] = []
    let next = 1
    for (const letter of first) {
      expanded.push(literalArg(`-${letter}`))
      if (TAR_VALUED.includes(letter) && args[next]) expanded.push(args[next++])
    }
    args = [...expanded, ...args.slice(next)]
  }
  const parsed = parseOptions(inv, TAR, args)
  const archive = parsed.values('-f', '--file')
  // `host:file` is a remote archive reached over rsh/ssh (unless --force-local).
  if (!parsed.has('--force-local') && archive.some((a) => a.value === undefined || /^[^/]*:/.test(a.value))) return inv.flag('dangerous', 'reaches a remote archive (network)')
  const dirs = parsed.values('-C', '--directory')
  if (parsed.has('-x', '--extract', '--get')) {
    read(inv, archive)
    if (!parsed.has('-O', '--to-stdout')) write(inv, dirs.length ? dirs : [literalArg('.')])
  } else if (parsed.has('-c', '--create', '-r', '--append', '-u', '--update', '-A', '--catenate', '--concatenate', '--delete')) {
    write(inv, archive)
    read(inv, parsed.operands)
  } else read(inv, archive)
  inv.allow()
}

const GZIP = options(
  '-c -d -f -k -l -n -N -q -r -t -v -h -V -# --stdout --to-stdout --decompress --uncompress --force --keep --list --no-name --name ' +
    '--quiet --recursive --test --verbose --fast --best --rsyncable --synchronous -S: --suffix:',
)
const BZIP2 = options('-c -d -z -k -f -t -q -v -s -L -V -# --stdout --decompress --compress --keep --force --test --quiet --verbose --small --fast --best')
const XZ = options(
  '-z -d -t -l -k -f -c -q -v -e -h -V -# -T: -S: --threads: --extreme --keep --force --stdout --to-stdout ' +
  '--decompress --uncompress --compress --test --list --quiet --verbose --suffix:',
)
const ZSTD = options(
  '-z -d -t -l -k -f -c -q -v -r -h -V -# -T: -D:r -o:w --rm --stdout --decompress --uncompress --compress --keep ' +
  '--force --test --list --quiet --verbose --output-dir-flat:w --threads:',
)

/** gzip & co. replace their operands in place, unless writing to stdout or only testing/listing. */
function compressor(table: OptionTable): Rule {
  return (inv) => {
    const parsed = parseOptions(inv, table)
    if (parsed.has('-c', '-t', '-l', '--stdout', '--to-stdout', '--test', '--list') || parsed.values('-o').length) read(inv, parsed.operands)
    else write(inv, parsed.operands)
    inv.allow()
  }
}

// zip: -T/-TT run an unzip command (GTFOBins: `zip x.zip f -T -TT 'sh #'`), -m deletes the originals: not listed.
const ZIP = options(
  '-r -R -q -v -j -y -u -f -d -# -@ -sf -P: -x: -i: --recurse-paths --quiet --verbose --junk-paths --symlinks ' +
  '--encrypt --exclude: --include: --password:',
)
// unzip: -: allows `../` paths, -M pipes through a pager, -Z is zipinfo: not listed.
const UNZIP = options('-l -t -v -z -p -c -f -u -o -n -q -qq -j -a -d:w -x: -P:')

const zip: Rule = (inv) => {
  const [archive, ...files] = parseOptions(inv, ZIP).operands
  if (archive) write(inv, [archive])
  read(inv, files)
  inv.allow()
}

const unzip: Rule = (inv) => {
  const parsed = parseOptions(inv, UNZIP)
  const [archive] = parsed.operands
  if (archive) read(inv, [archive])
  if (!parsed.has('-l', '-p', '-t', '-v', '-z', '-c') && !parsed.values('-d').length) write(inv, [literalArg('.')])
  inv.allow()
}

// rsync: -e/--rsh and --rsync-path run programs; --delete*/--remove-source-files delete (flagged below).
const RSYNC = options(
  '-a -v -r -l -p -t -g -o -D -z -h -P -n -u -c -q -i -L -H -A -X -x -R -m --archive --verbose --recursive --links ' +
  '--perms --times --group --owner --devices --specials --compress --human-readable --partial --progress --dry-run ' +
  '--update --checksum --quiet --itemize-changes --copy-links --hard-links --acls --xattrs --one-file-system ' +
  '--relative --prune-empty-dirs --omit-dir-times --sparse --stats --exclude: --include: --exclude-from:r ' +
  '--include-from:r --files-from:r --size-only --ignore-existing --existing --inplace --chmod: --delete ' +
  '--delete-before --delete-during --delete-delay --delete-after --delete-excluded --del --remove-source-files ' +
  '--log-file:w --backup-dir:w --temp-dir:w --partial-dir:w',
)

/** rsync: to or from another host is network access; deleting is dangerous, destructive into a catastrophic destination. */
const rsync: Rule = (inv) => {
  const parsed = parseOptions(inv, RSYNC)
  const ops = parsed.operands
  if (ops.some((a) => a.value === undefined || /^[^/]*:|^rsync:\/\//.test(a.value))) return inv.flag('dangerous', 'copies over the network')
  const dest = ops.slice(-1)
  if (parsed.seen.some((o) => o.name.startsWith('--del'))) {
    const broad = dest.map((d) => broadTarget(d, inv.scope)).find(Boolean)
    if (broad) return inv.flag('destructive', `deletes what is not in the source from ${broad}`)
    inv.flag('dangerous', 'deletes files in the destination')
  }
  if (parsed.has('--remove-source-files')) inv.flag('dangerous', 'deletes the source files')
  read(inv, ops.slice(0, -1))
  write(inv, dest)
  inv.allow()
}

export const fileRules: Record<string, Rule> = {
  cp: copy(CP, false),
  install: copy(INSTALL, false),
  mv: copy(MV, true),
  ln: link,
  touch: writesOperands(options('-a -c -f -h -m -d: -r:r -t: --date: --reference:r --time: --no-create --no-dereference')),
  mkdir: writesOperands(options('-p -v -Z -m: --parents --verbose --mode: --context=')),
  tee: writesOperands(options('-a -i -p --append --ignore-interrupts --output-error=')),
  truncate: writesOperands(options('-c -o -s: -r:r --no-create --io-blocks --size: --reference:r')),
  mkfifo: writesOperands(options('-Z -m: --mode:')),
  tar,
  gtar: tar,
  bsdtar: tar,
  zip,
  unzip,
  gzip: compressor(GZIP),
  gunzip: compressor(GZIP),
  bzip2: compressor(BZIP2),
  bunzip2: compressor(BZIP2),
  xz: compressor(XZ),
  unxz: compressor(XZ),
  zstd: compressor(ZSTD),
  unzstd: compressor(ZSTD),
  zcat: (inv) => {
    read(inv, parseOptions(inv, options('* -S:')).operands)
    inv.allow()
  },
  // The files it changes are named inside the patch (and GNU patch ran ed scripts: CVE-2018-1000156): a human looks.
  patch: (inv) => inv.flag('dangerous', 'applies a patch file (the files it changes are named inside it)'),
  rsync,
}
