// Development tools. The project's own test/build/lint entry points (`npm test`, `npm run build`, `make`, `go test`,
// `cargo build`, vitest, tsc…) are workspace work and safe; installing packages (their install scripts run),
// running a package that may be downloaded (npx), running arbitrary files or inline code with an interpreter,
// and publishing are dangerous.
import type { Arg, Invocation } from '../scope'
import { quote } from '../verdict'
import { hasFlag, operands, optionValues } from './args'
import { readArgs, readOnly } from './basic'
import { checkWrite } from '../effects'
import type { Rule } from './rule'

/** Script names taken for the project's development entry points (`test`, `build:prod`, `lint:fix`…). */
const DEV_SCRIPT = /^(test|tests|build|lint|check|typecheck|type-check|types|tsc|format|fmt|prettier|compile|dev|start|serve|preview|watch|bench|coverage|e2e|unit|clean|validate|verify|storybook|docs|all)(:[\w:.-]*)?$/i
const VERSION = /^(-v|-V|--version|version|-h|--help|help)$/

const INSTALL = new Set(['install', 'i', 'in', 'ins', 'inst', 'isntall', 'add', 'ci', 'update', 'up', 'upgrade', 'uninstall', 'remove', 'rm', 'un', 'unlink', 'link', 'ln', 'rebuild', 'dedupe', 'prune', 'import', 'patch', 'audit'])
const REGISTRY = new Set(['publish', 'unpublish', 'deprecate', 'owner', 'access', 'token', 'adduser', 'login', 'logout', 'dist-tag', 'team', 'org', 'star', 'unstar'])
const PM_READS = new Set(['ls', 'list', 'll', 'la', 'why', 'explain', 'outdated', 'view', 'info', 'show', 'v', 'version', 'help', 'pack', 'licenses', 'bin', 'root', 'prefix'])
const PM_VALUED = ['--prefix', '-w', '--workspace', '-C', '--dir', '--cwd', '--filter', '-F', '--loglevel']

/** npm, pnpm, yarn, bun: `scriptByName`: an unknown subcommand runs the package script of that name (pnpm, yarn, bun). */
function packageManager(scriptByName: boolean, bareInstalls: boolean): Rule {
  return (inv) => {
    const [sub, ...rest] = operands(inv.args, { valued: PM_VALUED })
    if (!sub) {
      if (bareInstalls && !inv.args.some((a) => VERSION.test(a.value ?? ''))) return inv.flag('dangerous', 'installs packages (their install scripts run)')
      return inv.allow()
    }
    const verb = sub.value?.toLowerCase()
    if (verb === undefined) return inv.flag('dangerous', 'runs a command known only at run time')
    if (verb === 'test' || verb === 't' || verb === 'tst' || verb === 'start') return inv.allow()
    if (verb === 'run' || verb === 'run-script' || verb === 'rr') return script(inv, rest[0])
    if (verb === 'config' || verb === 'c') return ['get', 'list', 'ls'].includes(rest[0]?.value ?? '') ? inv.allow() : inv.flag('dangerous', 'changes package manager configuration')
    if (PM_READS.has(verb) || VERSION.test(verb)) return inv.allow()
    if (INSTALL.has(verb)) return inv.flag('dangerous', 'installs packages (their install scripts run)')
    if (verb === 'exec' || verb === 'x' || verb === 'dlx' || verb === 'create' || verb === 'init') return inv.flag('dangerous', 'runs a package (may download it)')
    if (REGISTRY.has(verb)) return inv.flag('dangerous', 'publishes or changes the registry')
    if (scriptByName) return script(inv, sub)
    inv.flag('dangerous', `unknown subcommand (${quote(verb, 24)})`)
  }
}

function script(inv: Invocation, name: Arg | undefined) {
  if (!name) return inv.allow()
  if (name.value !== undefined && DEV_SCRIPT.test(name.value)) return inv.allow()
  inv.flag('dangerous', `runs a package script (${quote(name.text, 32)})`)
}

/** make with no target or development targets only. */
const make: Rule = (inv) => {
  const targets = operands(inv.args, { valued: ['-C', '-f', '-j', '-l', '-o', '-W', '-I', '--directory', '--file', '--makefile', '--jobs'] }).filter((a) => !/^\w+=/.test(a.value ?? ''))
  const other = targets.find((t) => t.value === undefined || !DEV_SCRIPT.test(t.value))
  if (other) return inv.flag('dangerous', `runs a make target (${quote(other.text, 32)})`)
  inv.allow()
}

const PYTHON_MODULES = /^(pytest|unittest|mypy|flake8|pyflakes|ruff|black|isort|venv|json\.tool|doctest|py_compile|compileall|pydoc|timeit)$/

/** An interpreter: its version is safe; a script, inline code or code from its input is dangerous. */
const interpreter: Rule = (inv) => {
  const args = inv.args
  if (args.length && args.every((a) => VERSION.test(a.value ?? ''))) return inv.allow()
  const module = optionValues(args, ['-m'])[0]
  if (module?.value && PYTHON_MODULES.test(module.value)) return inv.allow()
  if (module?.value === 'pip') return pip(inv, args.slice(args.indexOf(module) + 1))
  if (!operands(args).length && !hasFlag(args, 'ecp', ['--eval', '--print', '--command'])) {
    if (inv.stdin.kind === 'network') return inv.flag('dangerous', 'runs code fetched from the network', true)
    return inv.flag('dangerous', inv.stdin.kind === 'none' ? 'starts an interactive interpreter' : 'runs code from its input')
  }
  inv.flag('dangerous', 'runs a script or inline code')
}

/** pip & co.: looking is safe, changing what is installed is dangerous. */
function pip(inv: Invocation, args: Arg[] = inv.args) {
  const verb = operands(args)[0]?.value
  if ((verb && /^(list|show|freeze|check|help|search|inspect|debug)$/.test(verb)) || (!verb && args.some((a) => VERSION.test(a.value ?? '')))) return inv.allow()
  inv.flag('dangerous', 'installs or removes packages')
}

/** A toolchain whose listed subcommands build, test or inspect the project. */
function toolchain(safe: RegExp, otherwise: string): Rule {
  return (inv) => {
    const verb = operands(inv.args)[0]?.value
    if ((verb && safe.test(verb)) || (!verb && inv.args.some((a) => VERSION.test(a.value ?? '')))) return inv.allow()
    if (verb === 'run') return inv.flag('dangerous', 'runs a program')
    inv.flag('dangerous', `${otherwise} (${quote(verb ?? 'no subcommand', 24)})`)
  }
}

/** A compiler: safe, writing its output (-o) where writes are allowed. */
const compiler: Rule = (inv) => {
  for (const out of optionValues(inv.args, ['-o'])) checkWrite(out, inv.scope, inv.flag)
  readArgs(inv, operands(inv.args, { valued: ['-o', '-I', '-L', '-l', '-D', '-x', '-std'] }))
  inv.allow()
}

const INTERPRETERS = ['node', 'nodejs', 'python', 'python3', 'python2', 'ruby', 'perl', 'php', 'lua', 'luajit', 'rscript', 'java', 'tsx', 'ts-node', 'osascript', 'pwsh', 'powershell', 'groovy', 'julia', 'swift', 'elixir', 'irb']
const TEST_AND_BUILD = [
  'vitest', 'jest', 'mocha', 'ava', 'pytest', 'tsc', 'eslint', 'prettier', 'biome', 'ruff', 'black', 'isort', 'mypy',
  'pyright', 'flake8', 'pylint', 'rubocop', 'rspec', 'phpunit', 'gofmt', 'rustfmt', 'shellcheck', 'stylelint', 'vite',
  'webpack', 'esbuild', 'rollup', 'tsup',
]
const SYSTEM_PACKAGES = ['apt', 'apt-get', 'aptitude', 'yum', 'dnf', 'apk', 'brew', 'pacman', 'zypper', 'snap', 'flatpak', 'port', 'emerge', 'nix-env', 'pipx', 'gem', 'conda', 'mamba', 'micromamba', 'uv', 'poetry', 'pdm', 'composer', 'bundle', 'choco', 'winget', 'scoop', 'dpkg', 'rpm']

export const devRules: Record<string, Rule> = {
  npm: packageManager(false, false),
  pnpm: packageManager(true, true),
  yarn: packageManager(true, true),
  bun: (inv) => (operands(inv.args)[0]?.value === 'test' ? inv.allow() : packageManager(false, false)(inv)),
  npx: (inv) => (inv.args.every((a) => VERSION.test(a.value ?? '')) && inv.args.length ? inv.allow() : inv.flag('dangerous', 'runs a package (may download it)')),
  bunx: (inv) => inv.flag('dangerous', 'runs a package (may download it)'),
  pnpx: (inv) => inv.flag('dangerous', 'runs a package (may download it)'),
  make,
  gmake: make,
  ...Object.fromEntries(INTERPRETERS.map((n) => [n, interpreter])),
  deno: toolchain(/^(test|check|lint|fmt|info|doc|bench|task)$/, 'installs, runs or publishes'),
  go: toolchain(/^(test|build|vet|fmt|version|env|list|doc)$/, 'installs, runs or publishes'),
  cargo: toolchain(/^(test|build|check|fmt|clippy|doc|bench|tree|metadata|version)$/, 'installs, runs or publishes'),
  ...Object.fromEntries(TEST_AND_BUILD.map((n) => [n, readOnly])),
  ...Object.fromEntries(['gcc', 'g++', 'cc', 'c++', 'clang', 'clang++', 'rustc', 'javac'].map((n) => [n, compiler])),
  pip: (inv) => pip(inv),
  pip3: (inv) => pip(inv),
  ...Object.fromEntries(SYSTEM_PACKAGES.map((n) => [n, toolchain(/^(list|show|search|info|outdated|help|doctor|config|policy)$/, 'installs or removes packages')])),
}
