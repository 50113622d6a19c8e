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

/** Variables that change which program runs or inject code into the programs that do. */
export function riskyVariable(name: string): boolean {
  return RISKY.has(name) || /^(DYLD_|LD_|BASH_FUNC_|GIT_CONFIG_)/.test(name)
}

const RISKY = new Set([
  'PATH', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'CDPATH', 'GLOBIGNORE', 'NODE_OPTIONS',
  'NODE_PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'PERL5OPT', 'PERL5LIB', 'RUBYOPT', 'RUBYLIB', 'GIT_DIR', 'GIT_EXEC_PATH',
  'GIT_TEMPLATE_DIR', 'GIT_EXTERNAL_DIFF', 'GIT_ASKPASS', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'HISTFILE',
  ...codeVariables(),
])

function codeVariables() {
  return ['PAGER', 'GIT_PAGER', 'MANPAGER', 'EDITOR', 'VISUAL', 'GIT_EDITOR', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_SEQUENCE_EDITOR', 'PROMPT_COMMAND', 'LESSOPEN', 'LESSCLOSE']
}

/** Variables whose value is a command line some program runs: classified as a script too. */
export const CODE_VARIABLES = new Set(codeVariables())
