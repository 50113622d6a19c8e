import { entropy, type Findings, looksLikeSecret, SECRET_NAME } from './findings'

/**
 * The scanner's text rules. `scanCommonText` runs on everything a skill carries (code whatever its language,
 * comments included, and the description): credentials in known formats, raw-IP URLs, encoded blobs, escape runs.
 * `scanShellText` runs on what is not JavaScript (shell scripts, Markdown instructions, code that does not parse)
 * and on JavaScript's string values (a command handed to a shell); `scanJsLikeText` reads code that did not parse
 * for the JavaScript constructs the syntax tree would have caught.
 */

const KNOWN_SECRETS: Array<[RegExp, string]> = [
  [/\b[sr]k_live_[0-9a-zA-Z]{10,}/, 'Stripe live key'],
  [/\bsk_test_[0-9a-zA-Z]{10,}/, 'Stripe test key'],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, 'AWS access key id'],
  [/aws_secret_access_key\s*[=:]\s*['"]?[A-Za-z0-9/+=]{40}/i, 'AWS secret access key'],
  [/-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----/, 'private key'],
  [/\bgh[pousr]_[A-Za-z0-9]{36,}/, 'GitHub token'],
  [/\bgithub_pat_[A-Za-z0-9_]{22,}/, 'GitHub token'],
  [/\bglpat-[A-Za-z0-9_-]{20,}/, 'GitLab token'],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/, 'Slack token'],
  [/\bAIza[0-9A-Za-z_-]{35}/, 'Google API key'],
  [/\bsk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{20,}/, 'AI provider API key'],
  [/\bnpm_[A-Za-z0-9]{36}\b/, 'npm token'],
  [/\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/, 'signed JSON Web Token'],
]

/** A URL whose host is a literal IPv4 or IPv6 address, or an IPv4 address written as one number. */
const RAW_IP_URL = /\b[a-z][a-z0-9+.-]*:\/\/(?:[^\s/@'"`]*@)?(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]|0x[0-9a-fA-F]{6,8}|\d{8,10})(?=[:/?#'"`\s]|$)/i

const BASE64_BLOB = /[A-Za-z0-9+/]{100,}={0,2}|[A-Za-z0-9_-]{100,}/g
const HEX_BLOB = /\b(?:0x)?[0-9a-fA-F]{128,}\b/g
// Four or more escapes in a row (`\x65\x76\x61\x6c`): text written so a reader cannot read it.
const ESCAPE_RUN = /(?:\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]+\}|\\[0-7]{3}){4,}/
const TOKEN = /[A-Za-z0-9_\-+/=.]{32,}/g

export function scanCommonText(text: string, f: Findings) {
  for (const [pattern, what] of KNOWN_SECRETS) if (pattern.test(text)) f.reason(`Hard-coded credential: ${what}`)
  if (RAW_IP_URL.test(text)) f.warning('URL with a raw IP address instead of a host name', 'high')
  // Encoded data is varied: a long run of one letter (padding, a separator line) is not a blob.
  for (const m of text.match(BASE64_BLOB) ?? []) {
    if (/[0-9]/.test(m) && /[a-z]/.test(m) && /[A-Z]/.test(m) && entropy(m) >= 4) f.reason('Obfuscated code: long base64 blob')
  }
  for (const m of text.match(HEX_BLOB) ?? []) if (entropy(m) >= 3) f.reason('Obfuscated code: long hex blob')
  if (ESCAPE_RUN.test(text)) f.reason('Obfuscated code: run of \\x or \\u escapes')
  for (const m of text.match(TOKEN) ?? []) {
    // Paths, dotted names and version strings are long too, but not random; tokens mix cases and digits.
    if (m.length < 100 && /[0-9]/.test(m) && /[a-z]/.test(m) && /[A-Z]/.test(m) && !/[./]/.test(m) && entropy(m) >= 4.3) {
      f.warning('Long token-like string: possibly a credential', 'high')
    }
  }
}

const SHELL = String.raw`(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\S+=\S*\s+)*)?(?:(?:/usr/bin/|/bin/|/usr/local/bin/)?(?:ba|z|da|k|c|tc|fi|a)?sh\b|\$\{?SHELL\b)`
const PIPE_TO_SHELL = new RegExp(String.raw`\|\s*${SHELL}`)
const PIPE_TO_INTERPRETER = /\|\s*(?:sudo\s+)?(?:python[23]?|perl|ruby|node|php|deno\s+run|bun)\b(?:\s+-)?(?:\s*$|\s*[;&|)'"`]|\s+-[a-z]*\s*$)/m
const FETCH_INTO_SHELL = [
  /\b(?:ba|z|da|k)?sh\s+<\(\s*(?:curl|wget|fetch)\b/, // bash <(curl ...)
  /\b(?:ba|z|da|k)?sh\s+-c\s+["']?\$\(\s*(?:curl|wget)\b/, // sh -c "$(curl ...)"
  /\b(?:source|\.)\s+<\(\s*(?:curl|wget)\b/,
  /\beval\s+["']?\$\(\s*(?:curl|wget)\b/,
  /\b(?:iex|invoke-expression)\b[\s\S]{0,80}\b(?:downloadstring|invoke-webrequest|iwr|irm|invoke-restmethod)\b/i,
  /\b(?:downloadstring|iwr|irm|invoke-webrequest|invoke-restmethod)\b[\s\S]{0,120}\|\s*(?:iex|invoke-expression)\b/i,
]

const SHELL_REASONS: Array<[RegExp, string]> = [
  [/\brm\s+-[a-zA-Z]*(?:r[a-zA-Z]*f|f[a-zA-Z]*r)[a-zA-Z]*\s+(?:--no-preserve-root\s+)?(?:\/|~\/?|\$HOME\/?|\/\*)(?=\s|$|;|&|\*)/m, 'Deletes the root or home directory (rm -rf)'],
  [/\/dev\/(?:tcp|udp)\/|\b(?:nc|ncat|netcat)\b[^\n]*\s-[a-z]*[ec]\b|\bbash\s+-i\s+>&|\bmkfifo\b[^\n]*\b(?:nc|ncat)\b|\bsocat\b[^\n]*\bexec:/i, 'Opens a reverse shell'],
  [/(?:^|[;&|({\s])eval\s+["'$`]/m, 'Evaluates a string as shell code (eval)'],
  [/\b(?:curl|wget)\b[^\n]*(?:\n[^\n]*){0,3}\bchmod\s+(?:[ugoa]*\+x|[0-7]*[1357][0-7]{0,2})\b/, 'Downloads a program and makes it executable'],
  [/>>?\s*["']?(?:~|\$HOME|\/root|\/home\/[^/\s]+)?\/?\.(?:ssh\/authorized_keys|bashrc|bash_profile|profile|zshrc)\b|\|\s*crontab\s+-(?:\s|$)/m, 'Persists itself (shell start-up files, authorized_keys or crontab)'],
  [/\bhistory\s+-c\b|\bunset\s+HISTFILE\b|HISTFILE=\/dev\/null/, 'Hides its tracks (clears shell history)'],
  [/\bchmod\s+(?:-R\s+)?0?777\s+\/(?:\s|$)|\bmkfs(?:\.\w+)?\s+\/dev\/|\bdd\s+[^\n]*\bof=\/dev\/(?:sd|nvme|hd|xvd)/m, 'Destroys a disk or opens the whole file system'],
  [/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, 'Fork bomb'],
]

export function scanShellText(text: string, f: Findings) {
  if (PIPE_TO_SHELL.test(text)) f.reason('Pipes into a shell (for example curl … | sh)')
  if (PIPE_TO_INTERPRETER.test(text)) f.reason('Pipes downloaded or decoded text into an interpreter')
  if (FETCH_INTO_SHELL.some((p) => p.test(text))) f.reason('Runs a downloaded script (shell process substitution or eval of a download)')
  for (const [pattern, message] of SHELL_REASONS) if (pattern.test(text)) f.reason(message)
  if (/(?:^|[;&|\s])sudo\s/m.test(text)) f.warning('Runs commands as root (sudo)')
  if (/\b(?:curl|wget)\s/.test(text)) f.warning('Downloads from the network (curl or wget)')
  if (/(?:^|[;&|\s])(?:printenv|env)\s*(?:$|\||>|;)|\$\{?[A-Za-z_]*(?:TOKEN|SECRET|PASSWORD|API_KEY|PRIVATE_KEY)\b/m.test(text)) {
    f.warning('Reads secrets from the environment', 'high')
  }
  if (/\bbase64\s+(?:-d|--decode|-D)\b/.test(text)) f.warning('Decodes base64 data')
  // `TOKEN=...` / `password: ...` in a script or a config block
  const assigned = /\b([A-Za-z_][A-Za-z0-9_-]*)\s*[:=]\s*["']?([A-Za-z0-9_\-+/=.@!#%^&*]{12,})/g
  for (const [, name, value] of text.matchAll(assigned)) {
    if (SECRET_NAME.test(name) && looksLikeSecret(value) && !value.startsWith('$')) f.reason(`Hard-coded credential in ${name}`)
  }
}

/** JavaScript constructs in code that did not parse: read as text, so hiding them behind a syntax error gains nothing. */
export function scanJsLikeText(text: string, f: Findings) {
  if (/\beval\s*\(/.test(text)) f.reason('Uses eval')
  if (/\bnew\s+Function\s*\(|\bFunction\s*\(\s*['"`]/.test(text)) f.reason('Builds code from a string (Function constructor)')
  if (/\bset(?:Timeout|Interval|Immediate)\s*\(\s*['"`]/.test(text)) f.reason('Passes a string of code to a timer (setTimeout/setInterval)')
  if (/child_process/.test(text)) f.reason('Runs programs (child_process)')
  if (/\b(?:execSync|spawnSync|execFileSync)\s*\(|\bDeno\.(?:run|Command)\b|\bBun\.spawn/.test(text)) f.reason('Runs programs (child_process)')
  if (/\bprocess\.env\b|\bDeno\.env\b|\bimport\.meta\.env\b|\bBun\.env\b/.test(text)) f.warning('Reads environment variables')
  if (/String\.fromCharCode/.test(text)) f.warning('Builds strings from character codes (String.fromCharCode)')
  if (/\batob\s*\(\s*['"`][A-Za-z0-9+/=]{32,}/.test(text)) f.reason('Obfuscated code: decodes a long base64 string (atob)')
}

// Code written to reach a module loader or a global: with punctuation, so prose ("we process. Then") never matches;
// `process.env` alone is the warning scanJsLikeText gives.
const CAPABILITY_TEXT =
  /\b(?:require|import)\s*\(|\bprocess(?:\??\.(?!env\b)[A-Za-z_$]|\[)|\b(?:globalThis|global|window|self)(?:\??\.[A-Za-z_$]|\[)|\.constructor\b|\b(?:getBuiltinModule|createRequire)\b|\bmodule\??\.(?:require|constructor|parent|children)\b|\b(?:Deno|Bun)\.[A-Za-z_$]/

/**
 * Code that did not parse (a syntax the parsers do not know, JSX, a deliberate error) but names a module loader,
 * `process`, the global object or `.constructor`: the scanner cannot resolve what it uses, so it is blocked.
 */
export function scanUnparsedCode(text: string, f: Findings) {
  if (CAPABILITY_TEXT.test(text)) f.reason('Code the scanner cannot parse uses require, import(), process, the global object or .constructor')
}
