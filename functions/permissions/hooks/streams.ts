// What a command prints, when the classifier can know it: enough to see through `echo … | sh`,
// `echo <base64> | base64 -d | sh`, `xxd -r -p`, `rev`, and `$(echo rm)`. Everything else is unknown, or
// `network` for the commands that fetch (so `curl … | sh` is recognised as running fetched code).
import type { Arg, Stream } from './scope'
import { LIMITS, UNKNOWN } from './scope'

export const NETWORK_FETCHERS = new Set(['curl', 'wget', 'fetch', 'nc', 'ncat', 'netcat', 'socat', 'http', 'https', 'xh', 'aria2c', 'telnet', 'ssh', 'openssl'])

export function outputOf(name: string, args: Arg[], stdin: Stream): Stream {
  if (NETWORK_FETCHERS.has(name)) return { kind: 'network' }
  const values = args.map((a) => a.value)
  if (values.some((v) => v === undefined)) return UNKNOWN
  const argv = values as string[]
  switch (name) {
    case 'echo':
      return echo(argv)
    case 'printf':
      return printf(argv)
    case 'cat':
      return argv.every((a) => a === '-') && stdin.kind !== 'none' ? stdin : UNKNOWN
    case 'tee':
      return stdin.kind !== 'none' ? stdin : UNKNOWN
    case 'base64':
      return argv.some((a) => /^(--decode|-[a-zA-Z]*[dD][a-zA-Z]*)$/.test(a)) && stdin.kind === 'text' ? text(decodeBase64(stdin.text)) : UNKNOWN
    case 'xxd':
      return argv.includes('-r') && argv.some((a) => a === '-p' || a === '-ps' || a === '-plain') && stdin.kind === 'text' ? text(decodeHex(stdin.text)) : UNKNOWN
    case 'rev':
      return !argv.length && stdin.kind === 'text' ? text(stdin.text.split('\n').map((l) => [...l].reverse().join('')).join('\n')) : UNKNOWN
    default:
      return UNKNOWN
  }
}

function text(value: string | undefined): Stream {
  return value === undefined || value.length > LIMITS.valueChars ? UNKNOWN : { kind: 'text', text: value }
}

function echo(argv: string[]): Stream {
  let i = 0
  let newline = true
  let escapes = false
  for (; i < argv.length && /^-[neE]+$/.test(argv[i]); i++) {
    if (argv[i].includes('n')) newline = false
    if (argv[i].includes('e')) escapes = true
  }
  if (argv.reduce((n, a) => n + a.length + 1, 0) > LIMITS.valueChars) return UNKNOWN
  const body = argv.slice(i).join(' ')
  return text((escapes ? unescape(body) : body) + (newline ? '\n' : ''))
}

/** `printf` with `%s`/`%b`/`%%` only (what hides a command in practice); other formats are unknown. */
function printf(argv: string[]): Stream {
  let [format, ...rest] = argv
  if (format === '--') [format, ...rest] = rest
  if (format === undefined || /%[^sb%]/.test(format)) return UNKNOWN
  let out = ''
  let rounds = 0
  do {
    out += unescape(format).replace(/%([sb%])/g, (_, c: string) => (c === '%' ? '%' : c === 'b' ? unescape(rest.shift() ?? '') : (rest.shift() ?? '')))
  } while (rest.length && ++rounds < LIMITS.fields && format.includes('%') && out.length <= LIMITS.valueChars)
  return text(out)
}

/** The escapes of `echo -e` and printf formats that can spell a command. */
function unescape(s: string): string {
  return s.replace(/\\(x[0-9a-fA-F]{1,2}|0?[0-7]{1,3}|.)/g, (_, e: string) => {
    if (e[0] === 'x') return String.fromCharCode(parseInt(e.slice(1), 16))
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8))
    return { n: '\n', t: '\t', r: '\r', '\\': '\\', a: '\x07', e: '\x1b', v: '\v', f: '\f', b: '\b' }[e] ?? `\\${e}`
  })
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

function decodeBase64(s: string): string | undefined {
  try {
    const binary = atob(s.replace(/\s+/g, ''))
    return utf8.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))
  } catch {
    return undefined
  }
}

function decodeHex(s: string): string | undefined {
  const hex = s.replace(/\s+/g, '')
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) return undefined
  try {
    return utf8.decode(Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16)))
  } catch {
    return undefined
  }
}
