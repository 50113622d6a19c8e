// Development tools. Anything that runs code the agent can write is dangerous: package scripts (`npm test`,
// `npm run build`, `pnpm dev`), make, test runners, bundlers and linters whose config files are code (vitest,
// jest, eslint, prettier, webpack…), `python -m` (which imports from the working directory first), cargo (build
// scripts, proc macros, `.cargo/config.toml` aliases), yarn (runs the project's own release through yarnPath),
// interpreters running files or inline code, installs and publishing. Safe, with the options listed: versions,
// inspecting installed packages (npm ls/why/view, pip list), type-checking without emitting (`tsc --noEmit`), Go
// builds and vet (Go runs no project code at build time), formatters and linters whose configuration cannot name
// code (gofmt, rustfmt, shellcheck, ruff, black, biome), and C/Rust compilers without plug-ins or wrapper programs.
import { checkWrite } from '../effects'
import type { Arg, Invocation } from '../scope'
import { quote } from '../verdict'
import { operands } from './args'
import { readArgs, reads } from './basic'
import { options, parseOptions, type OptionTable } from './options'
import type { Rule } from './rule'

const VERSION = /^(-v|-V|--version|version|-h|--help|help)$/
const isVersion = (args: Arg[]) => args.length > 0 && args.every((a) => VERSION.test(a.value ?? ''))

const INSTALL = new Set(['install', 'i', 'in', 'ins', 'inst', 'isntall', 'add', 'ci', 'update', 'up', 'upgrade', 'uninstall', 'remove', 'rm', 'un', 'unlink', 'link', 'ln', 'rebuild', 'dedupe', 'prune', 'import', 'patch', 'audit'])
const REGISTRY = new Set(['publish', 'unpublish', 'deprecate', 'owner', 'access', 'token', 'adduser', 'login', 'logout', 'dist-tag', 'team', 'org', 'star', 'unstar'])
const SCRIPTS = new Set(['test', 't', 'tst', 'start', 'stop', 'restart', 'run', 'run-script', 'rr', 'pack', 'exec', 'x', 'explore', 'rebuild'])
// npm verbs that only look (no package script runs): with these options (not --registry, which would send the
// query, and whatever is in it, elsewhere).
const NPM_READS = new Set(['ls', 'list', 'll', 'la', 'why', 'explain', 'outdated', 'view', 'info', 'show', 'v', 'bin', 'root', 'prefix', 'fund'])
const NPM_READ = options(
  '--json --long -l --all -a --depth: --parseable -p --global -g --prod --production --dev --workspace: -w: ' +
  '--workspaces -ws --silent -s --quiet -q --verbose --color= --no-color',
)

/** npm: looking is safe; package scripts, packing (prepack), versioning (version scripts), installs are not. */
const npm: Rule = (inv) => {
  const [sub, ...rest] = operands(inv.args, { valued: ['--prefix', '-w', '--workspace', '-C', '--loglevel'] })
  if (!sub) return inv.args.every((a) => VERSION.test(a.value ?? '')) ? inv.allow() : inv.flag('dangerous', 'option not known to be harmless')
  const verb = sub.value?.toLowerCase()
  if (verb === undefined) return inv.flag('dangerous', 'runs a command known only at run time')
  if (NPM_READS.has(verb)) {
    parseOptions(inv, NPM_READ, inv.args.filter((a) => a !== sub))
    return inv.allow()
  }
  if ((verb === 'version' || verb === 'help') && inv.args.length === 1) return inv.allow()
  if (verb === 'config' || verb === 'c') {
    const [action, key] = rest
    // `npm config get //registry…/:_authToken` prints the token.
    if (action?.value === 'get' && key?.value && !/auth|token|password|_pass|cert|key/i.test(key.value) && rest.length === 2) return inv.allow()
    if ((action?.value === 'list' || action?.value === 'ls') && rest.length === 1) return inv.allow()
    return inv.flag('dangerous', 'changes or prints package manager configuration')
  }
  if (SCRIPTS.has(verb) || verb === 'version') return inv.flag('dangerous', `runs package scripts (npm ${quote(verb, 16)}: code in package.json)`)
  if (INSTALL.has(verb)) return inv.flag('dangerous', 'installs packages (their install scripts run)')
  if (verb === 'dlx' || verb === 'create' || verb === 'init') return inv.flag('dangerous', 'runs a package (may download it)')
  if (REGISTRY.has(verb)) return inv.flag('dangerous', 'publishes or changes the registry')
  inv.flag('dangerous', `unknown subcommand (${quote(verb, 24)})`)
}

/** pnpm, bun: their version is safe; every other verb may run package scripts or load project hooks. */
function packageManager(bareInstalls: boolean): Rule {
  return (inv) => {
    if (isVersion(inv.args)) return inv.allow()
    const verb = operands(inv.args)[0]?.value?.toLowerCase()
    if (!verb && bareInstalls) return inv.flag('dangerous', 'installs packages (their install scripts run)')
    if (verb && INSTALL.has(verb)) return inv.flag('dangerous', 'installs packages (their install scripts run)')
    if (verb && ['exec', 'x', 'dlx', 'create', 'init'].includes(verb)) return inv.flag('dangerous', 'runs a package (may download it)')
    if (verb && REGISTRY.has(verb)) return inv.flag('dangerous', 'publishes or changes the registry')
    inv.flag('dangerous', `runs package scripts or project hooks (${quote(verb ?? 'no subcommand', 24)})`)
  }
}

/** An interpreter: its version is safe; a script, inline code, a module (`-m` imports from here first) is dangerous. */
const interpreter: Rule = (inv) => {
  const args = inv.args
  if (isVersion(args)) return inv.allow()
  const module = args.findIndex((a) => a.value === '-m' || /^-m./.test(a.value ?? ''))
  if (module >= 0) {
    const name = args[module].value === '-m' ? args[module + 1]?.value : args[module].value?.slice(2)
    if (name === 'pip') return inv.flag('dangerous', 'installs or removes packages (python -m pip)')
    return inv.flag('dangerous', `runs a module found in the working directory first (-m ${quote(name ?? '', 24)})`)
  }
  if (!operands(args).length && !args.some((a) => /^-[a-zA-Z]*[ecp]$|^--(eval|print|command)/.test(a.value ?? ''))) {
    if (inv.stdin.kind === 'network') return inv.flag('dangerous', 'runs code fetched from the network', true)
    return inv.flag('dangerous', inv.stdin.kind === 'none' ? 'starts an interactive interpreter' : 'runs code from its input')
  }
  inv.flag('dangerous', 'runs a script or inline code')
}

const PIP_READ = options(
  '-l --local -u --user -o --outdated -e --editable --format: --not-required --exclude-editable --include-editable ' +
  '-v -q --verbose --quiet --disable-pip-version-check -f --files --all',
)

/** pip & co.: looking is safe, changing what is installed is dangerous. */
function pip(inv: Invocation) {
  if (isVersion(inv.args)) return inv.allow()
  const [verb, ...rest] = inv.args
  if (verb?.value && /^(list|show|freeze|check|inspect)$/.test(verb.value)) {
    parseOptions(inv, PIP_READ, rest)
    return inv.allow()
  }
  inv.flag('dangerous', 'installs or removes packages')
}

const GO_BUILD = options(
  '-o:w -v -x -n -a -race -msan -asan -trimpath -tags: -mod: -modcacherw -p: -buildvcs= -cover -covermode: -coverpkg: -work ' +
    '-json -f: -m -e -deps -test -find -compiled -export -C:r',
  { singleDash: true },
)
// Not listed: -toolexec, -exec, -vettool, -ldflags/-gcflags/-asmflags (`-extld=` runs a linker of one's choice),
// -compiler, -overlay, -pkgdir, -buildmode, -pgo; `go env -w` (persists GOFLAGS for every later build).
const GO: Record<string, OptionTable> = {
  build: GO_BUILD,
  vet: GO_BUILD,
  list: GO_BUILD,
  fmt: options('-n -x -mod:', { singleDash: true }),
  version: options('-m -v -json', { singleDash: true }),
  env: options('-json -changed', { singleDash: true }),
  doc: options('-all -c -cmd -short -src -u', { singleDash: true }),
}

const go: Rule = (inv) => {
  if (isVersion(inv.args)) return inv.allow()
  const [verb, ...rest] = inv.args
  const table = verb?.value !== undefined && Object.hasOwn(GO, verb.value) ? GO[verb.value] : undefined
  if (table) {
    readArgs(inv, parseOptions(inv, table, rest).operands)
    return inv.allow()
  }
  if (verb?.value === 'run' || verb?.value === 'test' || verb?.value === 'generate') return inv.flag('dangerous', `runs code from the project (go ${verb.value})`)
  inv.flag('dangerous', `installs, runs or publishes (${quote(verb?.value ?? 'no subcommand', 24)})`)
}

const TSC = options(
  '--noEmit -p:r --project:r --pretty= --strict --skipLibCheck --listFilesOnly --showConfig -v --version -h --help',
)

/** tsc: type-checking is safe; emitting writes wherever tsconfig.json says (outDir, outFile, declarationDir). */
const tsc: Rule = (inv) => {
  const parsed = parseOptions(inv, TSC)
  if (!parsed.has('--noEmit', '-v', '--version', '-h', '--help', '--showConfig', '--listFilesOnly')) return inv.flag('dangerous', 'writes compiled files where tsconfig.json says')
  readArgs(inv, parsed.operands)
  inv.allow()
}

// C compilers: plug-ins, other linkers, wrappers, spec and option files and arguments passed to the assembler,
// preprocessor or linker can all run programs.
const CC = options(
  '-c -S -E -g* -O* -W* -f* -m* -D* -U* -I* -L* -l* -std=* -print-* -o:w -x: -shared -static -pthread -pipe -v -w ' +
  '-pedantic --version -dumpversion -M -MM -MD -MMD -MF:w -include:r -isystem: -iquote: -nostdlib -s -fPIC -fpic',
)
const CC_PROGRAMS = /^(-fplugin|-fpass-plugin|-fuse-ld|--ld-path|-Wl,|-Wa,|-Wp,|-B|-wrapper|-specs|@|-X|--sysroot|-iplugindir|--config|-ccc-|-no-integrated-as|-fprofile-use)/

const compiler: Rule = (inv) => {
  const program = inv.args.find((a) => a.value === undefined || CC_PROGRAMS.test(a.value))
  if (program) return inv.flag('dangerous', `passes a program, plug-in or option file to the toolchain (${quote(program.text, 32)})`)
  readArgs(inv, parseOptions(inv, CC).operands)
  inv.allow()
}

// rustc: -C (linker=, link-arg=), -L/--extern (proc macros load and run), -Z: not listed.
const RUSTC = options('-o:w --out-dir:w --edition: --crate-type: --crate-name: -O -g --test --target: --cfg: --check-cfg: -W: -A: -D: -F: --cap-lints: --print: --version -V -v -h --help --explain: --emit: --error-format: --json: --color:')

const rustc: Rule = (inv) => {
  const parsed = parseOptions(inv, RUSTC)
  // `--emit=dep-info=PATH` writes PATH.
  for (const emit of parsed.values('--emit')) if (emit.value === undefined || emit.value.includes('=')) checkWrite({ ...emit, shape: emit.shape.replace(/^.*=/, '') }, inv.scope, inv.flag)
  readArgs(inv, parsed.operands)
  inv.allow()
}

/** A formatter or linter: `writes`: the option that makes it rewrite its operands. */
function formatter(table: OptionTable, writesWith: string[] = []): Rule {
  return (inv) => {
    const parsed = parseOptions(inv, table)
    const files = parsed.operands.filter((a) => !/^(check|format|fmt|lint|ci|version|rule|linter|config|explain)$/.test(a.value ?? ''))
    if (parsed.has(...writesWith)) files.forEach((f) => checkWrite(f, inv.scope, inv.flag))
    else readArgs(inv, files)
    inv.allow()
  }
}

const RUNS_PROJECT_CODE = [
  'vitest', 'jest', 'mocha', 'ava', 'pytest', 'eslint', 'prettier', 'stylelint', 'vite', 'webpack', 'esbuild', 'rollup', 'tsup',
  'rubocop', 'rspec', 'phpunit', 'mypy', 'pyright', 'flake8', 'pylint', 'isort', 'tox', 'nox', 'jasmine', 'karma', 'playwright',
  'cypress', 'turbo', 'nx', 'lerna', 'gulp', 'grunt', 'rake', 'gradle', 'gradlew', 'mvn', 'ant', 'sbt', 'bazel', 'cmake', 'meson',
  'ninja', 'just', 'task', 'ts-node-dev', 'nodemon', 'javac', 'bundle', 'composer', 'poetry', 'pdm', 'uv', 'hatch', 'rye',
]
const INTERPRETERS = ['node', 'nodejs', 'python', 'python3', 'python2', 'ruby', 'perl', 'php', 'lua', 'luajit', 'rscript', 'java', 'tsx', 'ts-node', 'osascript', 'pwsh', 'powershell', 'groovy', 'julia', 'swift', 'elixir', 'irb', 'deno']
const SYSTEM_PACKAGES = ['apt', 'apt-get', 'aptitude', 'yum', 'dnf', 'apk', 'brew', 'pacman', 'zypper', 'snap', 'flatpak', 'port', 'emerge', 'nix-env', 'pipx', 'gem', 'conda', 'mamba', 'micromamba', 'choco', 'winget', 'scoop', 'dpkg', 'rpm']
// apt's -o sets configuration that runs programs (APT::Update::Pre-Invoke, Dir::Bin::dpkg): only these options.
const PACKAGE_READ = options('--installed --upgradable --upgradeable -a --all-versions --cask --formula --versions --json= -1 -l -q --quiet -v --verbose --full-name --names-only --full')

/** A system package manager: looking (list, show, search…) is safe, anything else installs or removes. */
const systemPackages: Rule = (inv) => {
  if (isVersion(inv.args)) return inv.allow()
  const [verb, ...rest] = inv.args
  if (verb?.value && /^(list|show|search|info|outdated|policy)$/.test(verb.value)) {
    parseOptions(inv, PACKAGE_READ, rest)
    return inv.allow()
  }
  inv.flag('dangerous', `installs or removes packages (${quote(verb?.value ?? 'no subcommand', 24)})`)
}

const runsProjectCode = (why: string): Rule => (inv) => (isVersion(inv.args) ? inv.allow() : inv.flag('dangerous', why))

export const devRules: Record<string, Rule> = {
  npm,
  pnpm: packageManager(true),
  bun: packageManager(true),
  // yarn runs the release the project names (yarnPath, often a committed .yarn/releases/*.cjs), even for --version.
  yarn: (inv) => inv.flag('dangerous', "runs the project's yarn release and package scripts"),
  npx: runsProjectCode('runs a package (may download it)'),
  bunx: (inv) => inv.flag('dangerous', 'runs a package (may download it)'),
  pnpx: (inv) => inv.flag('dangerous', 'runs a package (may download it)'),
  make: runsProjectCode('runs Makefile recipes (code the agent can edit)'),
  gmake: runsProjectCode('runs Makefile recipes (code the agent can edit)'),
  ...Object.fromEntries(INTERPRETERS.map((n) => [n, interpreter])),
  cargo: runsProjectCode('runs code from the project (build scripts, proc macros, .cargo/config.toml)'),
  go,
  tsc,
  ...Object.fromEntries(RUNS_PROJECT_CODE.map((n) => [n, runsProjectCode('runs code or configuration from the project (tests, config files, plug-ins)')])),
  gofmt: formatter(options('-l -d -e -s -w -r:'), ['-w']),
  rustfmt: formatter(options('--check -l -v -q --edition: --emit: --config-path:r --config: -V --version -h --help')),
  shellcheck: reads(options('* -e: -f: -i: -o: -P: -s: -S: -W: --rcfile:r')),
  ruff: formatter(
    options(
      '--fix --unsafe-fixes --diff --check --show-fixes --statistics --select: --ignore: --extend-select: --line-length: ' +
        '--target-version: --output-format: --exclude: --preview -q -s -v -e -n --quiet --exit-zero --no-cache --config: ' +
        '--output-file:w -o:w --version -V -h --help',
    ),
  ),
  black: formatter(
    options(
      '--check --diff --color -q -v --quiet -l: --line-length: -t: --target-version: --include: --exclude: --config:r -S -C ' +
        '--skip-string-normalization --preview --fast -c: --code: --version -h --help',
    ),
  ),
  biome: formatter(
    options(
      '--write --fix --unsafe --staged --changed --since: --config-path:r --reporter: --max-diagnostics: --diagnostic-level: ' +
        '--error-on-warnings --no-errors-on-unmatched --verbose --only: --skip: --version -h --help',
    ),
  ),
  ...Object.fromEntries(['gcc', 'g++', 'cc', 'c++', 'clang', 'clang++'].map((n) => [n, compiler])),
  rustc,
  pip: (inv) => pip(inv),
  pip3: (inv) => pip(inv),
  ...Object.fromEntries(SYSTEM_PACKAGES.map((n) => [n, systemPackages])),
}
