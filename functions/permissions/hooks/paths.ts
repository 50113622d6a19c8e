// Paths as the classifier sees them: normalised the way the kernel would resolve them (`.`, `..`, repeated
// slashes, `~`), compared case-insensitively (macOS volumes are), then sorted into where they point and whether
// they hold secrets or the system.
//
// A normalised path is one of: `/abs/x` (absolute), `~/x` or `~user/x` (a home), `.` or `a/b` (inside the working
// directory), `../x` (above it), `?/x` (unknown base: a leading expansion, or the working directory is unknown).
// A part computed at run time stays in the path as DYNAMIC (may be empty) or NONEMPTY (`${x:?}`, never empty).

export const DYNAMIC = '\u0000'
export const NONEMPTY = '\u0001'

/** Where the working directory is, as a normalised path (`.` = the workspace); null when it cannot be known. */
export type Cwd = string | null

/** Resolves `shape` (a path as written, `$HOME` already turned into `~`) against `cwd` and normalises it. */
export function resolvePath(shape: string, cwd: Cwd): string {
  let start: Parsed
  let rest = shape
  if (shape.startsWith('~')) {
    const slash = shape.indexOf('/')
    const head = slash < 0 ? shape : shape.slice(0, slash)
    rest = slash < 0 ? '' : shape.slice(slash + 1)
    if (head === '~+') start = parse(cwd)
    else if (head === '~-' || head.includes(DYNAMIC) || head.includes(NONEMPTY)) start = { root: '?', segs: [] }
    else start = { root: head, segs: [] }
  } else if (shape.startsWith('/')) start = { root: '/', segs: [] }
  else if (shape.startsWith(DYNAMIC) || shape.startsWith(NONEMPTY)) start = { root: '?', segs: [] }
  else start = parse(cwd)
  let { root } = start
  const segs = [...start.segs]
  for (const seg of rest.split('/')) {
    if (seg === '' || seg === '.') continue
    if (seg !== '..') segs.push(seg)
    else if (segs.length && segs[segs.length - 1] !== '..') segs.pop()
    else if (root === '.' || root === '?') segs.push('..')
    // `~/..` leaves the home: the parent of homes.
    else if (root.startsWith('~')) (root = '/'), segs.push('home')
  }
  if (root === '/') return `/${segs.join('/')}`
  if (root === '.') return segs.length ? segs.join('/') : '.'
  return segs.length ? `${root}/${segs.join('/')}` : root
}

interface Parsed {
  root: string
  segs: string[]
}

/** Splits an already normalised path (a working directory) into its root and segments. */
function parse(path: Cwd): Parsed {
  if (path === null) return { root: '?', segs: [] }
  const parts = path.split('/').filter((s) => s && s !== '.')
  if (path.startsWith('/')) return { root: '/', segs: parts }
  if (path.startsWith('~') || path.startsWith('?')) return { root: parts[0], segs: parts.slice(1) }
  return { root: '.', segs: parts }
}

/** The same path with its run-time parts taken as empty: what `rm -rf "$DIR/"` deletes when DIR is unset. */
export function withoutDynamicParts(shape: string): string | undefined {
  if (!shape.includes(DYNAMIC)) return undefined
  return shape.split(DYNAMIC).join('')
}

/** Other spellings of the same path a tool or a shell could act on: URL-decoded, backslashes as separators, `file://`. */
export function spellings(raw: string): string[] {
  const out = new Set([raw])
  for (const s of [...out]) if (s.toLowerCase().startsWith('file://')) out.add(s.slice(7))
  for (const s of [...out]) if (s.includes('%')) out.add(safeDecode(s))
  for (const s of [...out]) if (s.includes('\\')) out.add(s.replace(/\\/g, '/'))
  return [...out]
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s.replace(/%2e/gi, '.').replace(/%2f/gi, '/').replace(/%5c/gi, '\\')
  }
}

const segmentsOf = (path: string) => path.toLowerCase().split('/').filter((s) => s && s !== '.')

// Files that hold secrets wherever they are (basename, lowercased).
const SECRET_FILES = new Set([
  '.env', '.envrc', '.netrc', '_netrc', '.npmrc', '.yarnrc.yml', '.pypirc', '.pgpass', '.my.cnf', '.git-credentials',
  '.htpasswd', '.vault-token', '.boto', '.s3cfg', '.dockercfg', 'credentials', 'authorized_keys', 'shadow', 'gshadow',
  'sudoers', 'master.key', 'kubeconfig', 'secrets.json', 'secrets.yaml', 'secrets.yml', 'secrets.toml',
])
// Environment templates meant to be committed: not secrets.
const ENV_TEMPLATES = /^\.env\.(example|sample|template|dist|defaults)$/
const SECRET_PREFIXES = ['.env.', 'id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519', 'client_secret']
const SECRET_SUFFIXES = ['.pem', '.key', '.p12', '.pfx', '.jks', '.keystore', '.kdbx', '.ppk']
// Directories whose whole content is secret.
const SECRET_DIRS = new Set(['.ssh', '.aws', '.gnupg', '.azure', '.kube', '.docker', '.password-store'])
const SECRET_PATHS = ['/etc/sudoers.d', '/etc/ssh', '/var/run/secrets', '/run/secrets', '/proc/kcore']

function secretName(name: string): boolean {
  if (ENV_TEMPLATES.test(name)) return false
  if (SECRET_FILES.has(name) || name.includes('credential')) return true
  return SECRET_PREFIXES.some((p) => name.startsWith(p)) || SECRET_SUFFIXES.some((s) => name.endsWith(s))
}

/** A path whose content is a secret: reading it is dangerous. Returns the part that matched. */
export function secretPart(path: string): string | undefined {
  const segs = segmentsOf(path)
  const lower = `/${segs.join('/')}`
  for (let i = 0; i < segs.length; i++) {
    if (SECRET_DIRS.has(segs[i])) return segs[i]
    if ((segs[i] === 'gcloud' || segs[i] === 'gh') && segs[i - 1] === '.config') return `.config/${segs[i]}`
  }
  const name = segs[segs.length - 1]
  if (name && secretName(name)) return name
  if (path.startsWith('/')) {
    const hit = SECRET_PATHS.find((p) => lower === p || lower.startsWith(`${p}/`))
    if (hit) return hit
    if (/^\/proc\/[^/]+\/(environ|mem|cmdline)$/.test(lower)) return lower
  }
  return undefined
}

// Files that run code or grant access when written (shell start-up, git hooks, scheduled jobs, autostart).
const STARTUP_FILES = new Set([
  '.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.profile', '.zshrc', '.zprofile', '.zshenv', '.zlogin',
  '.cshrc', '.tcshrc', '.kshrc', '.gitconfig', 'crontab',
])
// The operating system's own trees: writing there changes the machine, not the project.
const OS_DIRS = [
  '/etc', '/bin', '/sbin', '/boot', '/dev', '/sys', '/proc', '/lib', '/lib32', '/lib64', '/libx32', '/usr/bin',
  '/usr/sbin', '/usr/lib', '/usr/lib32', '/usr/lib64', '/usr/libexec', '/usr/share', '/usr/include', '/usr/local/bin',
  '/usr/local/sbin', '/usr/local/lib', '/usr/local/etc', '/var/lib', '/var/spool', '/var/log', '/var/run', '/run',
  '/system', '/library', '/private/etc', '/private/var/db', '/snap', '/opt/homebrew/bin',
]

/** Under one of the operating system's trees (`/etc`, `/usr/bin`, `/boot`…). */
export function osPath(path: string): boolean {
  if (!path.startsWith('/')) return false
  const lower = `/${segmentsOf(path).join('/')}`
  return OS_DIRS.some((d) => lower === d || lower.startsWith(`${d}/`))
}

/** A path that is dangerous to write: secrets, start-up files, git hooks and config, the system's trees. */
export function sensitiveWritePart(path: string): string | undefined {
  const secret = secretPart(path)
  if (secret) return secret
  const segs = segmentsOf(path)
  const name = segs[segs.length - 1]
  if (name && STARTUP_FILES.has(name)) return name
  // Anything under .git (hooks, config, modules' configs) or a `.git` file (`gitdir: elsewhere`), and `HEAD`, which
  // with `objects/` and `refs/` makes a directory a repository whose plain `config` (core.fsmonitor…) git obeys.
  const git = segs.indexOf('.git')
  if (git >= 0) return segs[git + 1] ? `.git/${segs[git + 1]}` : '.git'
  if (name === 'head') return 'HEAD'
  const joined = segs.join('/')
  if (/(^|\/)(\.config\/(autostart|systemd|fish)|library\/launchagents|library\/launchdaemons)(\/|$)/.test(joined)) return joined
  if (osPath(path) && !harmlessDevice(path)) return path
  return undefined
}

/** Block devices and kernel memory: writing them destroys disks or the running system. */
export function blockDevice(path: string): boolean {
  return /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|r?disk\d|md\d|dm-\d|loop\d|sr\d|fd\d|mapper\/|disk\/|mem$|kmem$|port$)/.test(path.toLowerCase())
}

/** Bash's `/dev/tcp/host/port` and `/dev/udp/…`: a network connection, not a file. */
export function networkDevice(path: string): boolean {
  return /^\/dev\/(tcp|udp)\//.test(path.toLowerCase())
}

/** Places any command may write: the null device, the standard streams, file descriptors, the terminal. */
export function harmlessDevice(path: string): boolean {
  return /^\/dev\/(null|zero|stdout|stderr|stdin|tty|fd\/\d+|full|random|urandom)$/.test(path.toLowerCase())
}

/** Scratch space any process may use. */
export function tempPath(path: string): boolean {
  return /^\/(tmp|var\/tmp|private\/tmp|dev\/shm)(\/|$)/.test(path.toLowerCase()) || /^\/var\/folders\//.test(path)
}

/** Inside the working directory (a relative path that does not climb out of it). */
export function inWorkspace(path: string): boolean {
  return path === '.' || !(path.startsWith('/') || path.startsWith('~') || path.startsWith('?') || path === '..' || path.startsWith('../'))
}

const HOME_PARENTS = new Set(['home', 'users'])

/**
 * A deletion target whose loss is catastrophic: the root or anything one level under it, a home (`~`, `/home/x`,
 * `/root`) or all of one's content, a secrets directory, the operating system's trees, the whole working directory
 * (`.`, `*`) or anything above it. `path` is normalised; globs are still in it.
 */
export function broadPath(path: string): boolean {
  const segs = segmentsOf(path)
  const glob = (s: string | undefined) => s !== undefined && /[*?[]/.test(s)
  if (path.startsWith('/')) {
    if (segs.length <= 1) return true
    if (HOME_PARENTS.has(segs[0]) && (segs.length === 2 || (segs.length === 3 && glob(segs[2])))) return true
    if (segs[0] === 'root' && segs.length === 2 && glob(segs[1])) return true
    if (segs.some((s) => SECRET_DIRS.has(s)) && SECRET_DIRS.has(segs[segs.length - 1])) return true
    return osPath(path) && !harmlessDevice(path) && !tempPath(path)
  }
  if (path.startsWith('~')) {
    const inner = segs.slice(1)
    return inner.length === 0 || (inner.length === 1 && (glob(inner[0]) || SECRET_DIRS.has(inner[0])))
  }
  if (path.startsWith('?')) return segs.length === 2 && /^[*?]+$|^\.\*$/.test(segs[1])
  // Relative: the working directory itself, everything in it, or anything above it.
  const inner = segs.filter((s) => s !== '..')
  if (segs[0] === '..') return inner.length === 0 || (inner.length === 1 && glob(inner[0]) && /^[.*?]+$/.test(inner[0]))
  return inner.length === 0 || (inner.length === 1 && /^(\.?\*|\*\.?\*?|\.\*|\?+|\*+)$/.test(inner[0]))
}

// Names a glob could reach that are secrets (`cat .e*`, `cat ~/.ss?/*`, `grep x *.pem`).
const SECRET_SAMPLES = ['.env', '.env.local', '.envrc', '.netrc', '.npmrc', '.pgpass', '.git-credentials', 'credentials', 'credentials.json', 'id_rsa', 'id_ed25519', 'server.key', 'key.pem', 'cert.p12', ...SECRET_DIRS]

/** A glob segment that could match a secret's name; a bare wildcard (`*`) is not taken to aim at one. */
export function globSecret(path: string): string | undefined {
  for (const seg of segmentsOf(path)) {
    if (!/[*?[]/.test(seg) || /^[*?]+$/.test(seg)) continue
    const atoms = globAtoms(seg)
    const hit = SECRET_SAMPLES.find((name) => (seg.startsWith('.') || !name.startsWith('.')) && globMatch(atoms, name))
    if (hit) return seg
  }
  return undefined
}

type Atom = { kind: 'star' } | { kind: 'any' } | { kind: 'char'; c: string } | { kind: 'class'; negate: boolean; body: string }

function globAtoms(glob: string): Atom[] {
  const atoms: Atom[] = []
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === '*') {
      if (atoms[atoms.length - 1]?.kind !== 'star') atoms.push({ kind: 'star' })
    } else if (c === '?') atoms.push({ kind: 'any' })
    else if (c === '[' && glob.indexOf(']', i + 2) > 0) {
      const close = glob.indexOf(']', i + 2)
      const negate = glob[i + 1] === '!' || glob[i + 1] === '^'
      atoms.push({ kind: 'class', negate, body: glob.slice(i + (negate ? 2 : 1), close) })
      i = close
    } else atoms.push({ kind: 'char', c })
  }
  return atoms
}

function atomMatches(atom: Atom, c: string): boolean {
  if (atom.kind === 'any') return true
  if (atom.kind === 'char') return atom.c === c
  if (atom.kind !== 'class') return false
  let hit = false
  for (let k = 0; k < atom.body.length && !hit; k++) {
    if (atom.body[k + 1] === '-' && k + 2 < atom.body.length) {
      hit = c >= atom.body[k] && c <= atom.body[k + 2]
      k += 2
    } else hit = atom.body[k] === c
  }
  return hit !== atom.negate
}

/** Wildcard matching with one backtrack point per star: O(pattern × name), whatever the pattern. */
function globMatch(atoms: Atom[], name: string): boolean {
  let p = 0
  let i = 0
  let star = -1
  let resume = 0
  while (i < name.length) {
    const atom = atoms[p]
    if (atom && atom.kind !== 'star' && atomMatches(atom, name[i])) (p++, i++)
    else if (atom?.kind === 'star') (star = p++), (resume = i)
    else if (star >= 0) (p = star + 1), (i = ++resume)
    else return false
  }
  while (atoms[p]?.kind === 'star') p++
  return p === atoms.length
}

// Directories whose programs are the system's own: `/bin/rm` is rm. Anything else by path (`./rm`) is not.
const SYSTEM_BIN = new Set(['/bin', '/usr/bin', '/sbin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin', '/opt/homebrew/bin', '/run/current-system/sw/bin'])

/** The rule name of a program: lowercased (macOS finds `RM` as rm), without a system directory; undefined for other paths. */
export function programName(raw: string): string | undefined {
  const slash = raw.lastIndexOf('/')
  if (slash < 0) return raw.toLowerCase()
  const dir = resolvePath(raw.slice(0, slash) || '/', '.')
  return SYSTEM_BIN.has(dir.toLowerCase()) && slash < raw.length - 1 ? raw.slice(slash + 1).toLowerCase() : undefined
}
