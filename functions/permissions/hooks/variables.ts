// Variables that matter to the classifier: those whose value is a secret, and those that change what runs.

// Tokens of a variable name (split on `_`) that mark a secret: `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`.
const SECRET_TOKENS = new Set([
  'SECRET', 'SECRETS', 'TOKEN', 'TOKENS', 'PASSWORD', 'PASSWD', 'PASS', 'PASSPHRASE', 'APIKEY', 'CREDENTIAL', 'CREDENTIALS',
  'AUTH', 'COOKIE', 'DSN', 'PRIVATE',
])
const SECRET_NAMES = /^(AWS_|AZURE_|GCP_|GOOGLE_APPLICATION_|STRIPE_|OPENAI_|ANTHROPIC_)|_KEY$|^KEY$|^(DATABASE|REDIS|MONGO|MONGODB|POSTGRES|POSTGRESQL|MYSQL|AMQP)_(URL|URI)$/

/** A variable that probably holds a secret (reading it into a command's arguments or output is dangerous). */
export function secretVariable(name: string): boolean {
  const upper = name.toUpperCase()
  if (upper === 'PWD' || upper === 'OLDPWD') return false
  return SECRET_NAMES.test(upper) || upper.split('_').some((t) => SECRET_TOKENS.has(t))
}

/**
 * Variables that change which program runs, inject code into the programs that do, or point them at configuration
 * elsewhere (a config file can name a program to run: git's core.fsmonitor, ripgrep's --pre, tar's --to-command).
 * The environment is an open namespace, so this is the list of what the allowed programs and the loader, libc and
 * shells under them read (from GTFOBins and the bypasses reported against coding agents); anything else named here
 * is data to them.
 */
export function riskyVariable(name: string): boolean {
  return RISKY.has(name) || RISKY_PREFIX.test(name) || /^npm_config_/i.test(name)
}

// Go: flags (-toolexec), another toolchain or module proxy, programs for caches and auth; GOOS/GOARCH are data.
const RISKY_PREFIX =
  /^(DYLD_|LD_|BASH_FUNC_|GIT_|XDG_|LESS|PYTHON|PERL|RUBY|CGO_(C|CPP|CXX|F|LD)FLAGS|CARGO_|RUSTC|RUSTDOC|JAVA_|JDK_|_JAVA_|OPENSSL_|TERMINFO|NODE_OPTIONS|NODE_PATH|NODE_REPL|PS[0-4]$|GO(FLAGS|ENV|ROOT|TOOLCHAIN|PROXY|SUMDB|NOSUMDB|NOSUMCHECK|PRIVATE|NOPROXY|INSECURE|CACHE|CACHEPROG|MODCACHE|PATH|BIN|VCS|AUTH)$)/

const RISKY = new Set([
  // The shell: what runs, what it reads at start-up, how it splits and finds commands.
  'PATH', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'SHELLOPTS', 'BASHOPTS', 'CDPATH', 'GLOBIGNORE', 'HISTFILE', 'ZDOTDIR',
  'INPUTRC', 'BASH_LOADABLES_PATH', 'EXECIGNORE', 'SHELL', 'HOME',
  // glibc: character-set converters and locale data are loaded code.
  'GCONV_PATH', 'LOCPATH', 'NLSPATH', 'HOSTALIASES',
  // Programs that read their options or configuration from the environment.
  'RIPGREP_CONFIG_PATH', 'GREP_OPTIONS', 'TAR_OPTIONS', 'GZIP', 'BZIP', 'BZIP2', 'XZ_DEFAULTS', 'XZ_OPT', 'ZSTD_CLEVEL',
  'AWKPATH', 'AWKLIBPATH', 'MANOPT', 'MANPATH', 'BROWSER', 'TERMCAP', 'MAGIC', 'RSYNC_RSH', 'RSYNC_CONNECT_PROG',
  'NODE_OPTIONS', 'NODE_PATH', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'SSH_AUTH_SOCK',
  // Compilers: other compilers, wrappers, plug-in search paths, dependency files written elsewhere.
  'CC', 'CXX', 'CPP', 'LD', 'AR', 'AS', 'CFLAGS', 'CXXFLAGS', 'CPPFLAGS', 'LDFLAGS', 'COMPILER_PATH', 'GCC_EXEC_PREFIX',
  'LIBRARY_PATH', 'CPATH', 'C_INCLUDE_PATH', 'CPLUS_INCLUDE_PATH', 'DEPENDENCIES_OUTPUT', 'SUNPRO_DEPENDENCIES', 'RUSTFLAGS',
  ...codeVariables(),
])

function codeVariables() {
  return ['PAGER', 'GIT_PAGER', 'MANPAGER', 'SYSTEMD_PAGER', 'EDITOR', 'VISUAL', 'GIT_EDITOR', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_SEQUENCE_EDITOR', 'PROMPT_COMMAND', 'LESSOPEN', 'LESSCLOSE']
}

/** Variables whose value is a command line some program runs: classified as a script too. */
export const CODE_VARIABLES = new Set(codeVariables())
