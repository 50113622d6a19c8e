import { describe, expect, it } from 'vitest'
import { parse } from 'unbash'
import { arithmeticRisk, subscriptRisk, textRisk } from '../../functions/permissions/hooks/arithmetic'
import { mayBeOption, options, parseOptions } from '../../functions/permissions/hooks/commands/options'
import { awkEffect, sedScriptIsPlain } from '../../functions/permissions/hooks/commands/text'
import { literalArg, unknownArg, Verdict, type Arg, type Invocation, type Scope } from '../../functions/permissions/hooks/scope'
import { broadPath, globSecret, resolvePath, secretPart, sensitiveWritePart } from '../../functions/permissions/hooks/paths'
import { braceAlternatives } from '../../functions/permissions/hooks/words'

describe('paths', () => {
  it('resolves like the kernel: dots, repeated slashes, the working directory, homes', () => {
    expect(resolvePath('src/../.env', '.')).toBe('.env')
    expect(resolvePath('a//b/./c/', '.')).toBe('a/b/c')
    expect(resolvePath('../x', '.')).toBe('../x')
    expect(resolvePath('../../x', 'src')).toBe('../x')
    expect(resolvePath('/tmp/../etc', '.')).toBe('/etc')
    expect(resolvePath('/..', '.')).toBe('/')
    expect(resolvePath('passwd', '/etc')).toBe('/etc/passwd')
    expect(resolvePath('~/.ssh/../.aws', '.')).toBe('~/.aws')
    expect(resolvePath('~/..', '.')).toBe('/home')
    expect(resolvePath('~alice/x', '.')).toBe('~alice/x')
    expect(resolvePath('x', null)).toBe('?/x')
    expect(resolvePath('~+/x', 'src')).toBe('src/x')
  })

  it('knows secrets, case-insensitively, and leaves templates alone', () => {
    for (const p of ['.env', 'a/.ENV.local', '~/.ssh/config', '/root/.aws/credentials', 'id_ed25519.pub', 'k/server.key', '/etc/shadow', '/proc/1/environ', '~/.config/gh/hosts.yml'])
      expect(secretPart(p), p).toBeDefined()
    for (const p of ['.env.example', 'src/env.ts', 'README.md', '/etc/hosts', 'keys.ts', '.environment']) expect(secretPart(p), p).toBeUndefined()
  })

  it('knows what is dangerous to write beyond secrets', () => {
    for (const p of ['~/.bashrc', '.git/hooks/post-checkout', '/usr/local/bin/node', '/etc/hosts', '/boot/x', '~/Library/LaunchAgents/a.plist'])
      expect(sensitiveWritePart(p), p).toBeDefined()
    for (const p of ['src/a.ts', '/home/agent/project/a.ts', '/usr/src/app/index.js', '/tmp/x', '/dev/null', 'src/head.ts', 'git/config']) expect(sensitiveWritePart(p), p).toBeUndefined()
    // A repository is made by `.git` (a directory or a `gitdir:` file) or by HEAD next to objects/ and refs/.
    for (const p of ['.git', 'sub/.git', '.git/modules/x/config', '.git/info/attributes', 'r/HEAD']) expect(sensitiveWritePart(p), p).toBeDefined()
  })

  it('matches globs against secret names without backtracking blow-ups', () => {
    expect(globSecret('.e*')).toBe('.e*')
    expect(globSecret('*.pem')).toBe('*.pem')
    expect(globSecret('.[!x]nv')).toBe('.[!x]nv')
    expect(globSecret('*')).toBeUndefined()
    expect(globSecret('*.ts')).toBeUndefined()
    expect(globSecret('[.]env')).toBeUndefined() // a leading dot is only matched by a literal dot
    const start = performance.now()
    expect(globSecret(`${'*?'.repeat(3000)}x`)).toBeUndefined()
    expect(performance.now() - start).toBeLessThan(200)
  })

  it('finds catastrophic deletion targets', () => {
    for (const p of ['/', '/etc', '/tmp', '/home/alice', '/home/*', '/usr/lib/x', '~', '~/*', '~/.ssh', '.', '*', '.*', '..', '../*', '?/*'])
      expect(broadPath(p), p).toBe(true)
    for (const p of ['dist', 'node_modules', '*.log', '/tmp/build', '~/.cache/pip', '../other-project', '/home/alice/project']) expect(broadPath(p), p).toBe(false)
  })
})

describe('brace expansion', () => {
  it('expands lists, nested lists and sequences, bounded', () => {
    expect(braceAlternatives('{a,b}')).toEqual(['a', 'b'])
    expect(braceAlternatives('{rm,-rf,/}')).toEqual(['rm', '-rf', '/'])
    expect(braceAlternatives('{a,{b,c}}')).toEqual(['a', 'b', 'c'])
    expect(braceAlternatives('{1..3}')).toEqual(['1', '2', '3'])
    expect(braceAlternatives('{c..a}')).toEqual(['c', 'b', 'a'])
    expect(braceAlternatives('{1..1000}')).toBeUndefined()
    expect(braceAlternatives('{$x,y}')).toBeUndefined()
  })
})

describe('sed and awk programs', () => {
  it('tells plain sed scripts from those that run commands or touch files', () => {
    for (const s of ['s/a/b/g', '1,20p', '/^#/d', 's|a|b|2;s/x/y/I', '$!N;P;D', '/start/,/end/{s/a/b/;p}', 'y/abc/xyz/', '1i\\\nheader', ':a;N;ba', 's/e/w/g'])
      expect(sedScriptIsPlain(s), s).toBe(true)
    for (const s of ['s/a/b/e', 's/a/b/w out', 'w out', '1e rm -rf /', 'r /etc/shadow', 'R x', '/x/W y', 's/a/b', 'k'])
      expect(sedScriptIsPlain(s), s).toBe(false)
  })

  it('tells awk filters from programs with side effects', () => {
    for (const p of ['{print $1}', '$3 > 100 { print $1 }', 'a || b { print }', 'BEGIN{FS=","} {s+=$2} END{print s}']) expect(awkEffect(p), p).toBeUndefined()
    for (const p of ['{system("ls")}', '{print > "f"}', '{print | "sh"}', 'BEGIN{ "date" | getline d }', '{print ENVIRON["HOME"]}']) expect(awkEffect(p), p).toBeDefined()
  })
})

describe('option tables', () => {
  const scope = (): Scope => ({ verdict: new Verdict(), depth: 0, cwd: '.', vars: new Map(), functions: new Map() })
  const read = (spec: string, words: Array<string | Arg>, flags = {}) => {
    const flagged: string[] = []
    const inv = { name: 'x', args: words.map((w) => (typeof w === 'string' ? literalArg(w) : w)), stdin: { kind: 'none' }, scope: scope(), flag: (_t: string, why: string) => void flagged.push(why), allow: () => {}, run: () => {}, runScript: () => {}, streamOf: () => ({ kind: 'unknown' }) } as unknown as Invocation
    const parsed = parseOptions(inv, options(spec, flags))
    return { operands: parsed.operands.map((a) => a.value ?? a.text), seen: parsed.seen.map((o) => (o.value ? `${o.name}=${o.value.value}` : o.name)), flagged }
  }

  it('reads clusters, attached and separate values, long options with = or a word, counts, and --', () => {
    expect(read('-r -n -e: -#', ['-rn', '-efoo', '-e', 'bar', '-5', 'file', '--', '-x'])).toEqual({ operands: ['file', '-x'], seen: ['-r', '-n', '-e=foo', '-e=bar', '-#'], flagged: [] })
    expect(read('--output:w --color=', ['--output=out.txt', '--color', '--color=auto', 'f'])).toEqual({ operands: ['f'], seen: ['--output=out.txt', '--color', '--color=auto'], flagged: [] })
    expect(read('-i= -n', ['-ni.bak', 'f']).seen).toEqual(['-n', '-i=.bak'])
  })

  it('flags options not in the table, abbreviations included, and a value given to a flag', () => {
    expect(read('-o:w --output:w', ['--out=x', 'f']).flagged).toEqual(['option not known to be harmless (--out=x)'])
    expect(read('-a -b', ['-abc']).flagged).toEqual(['option not known to be harmless (-c in -abc)'])
    expect(read('--all', ['--all=1']).flagged).toEqual(['option not known to be harmless (--all=1)'])
    expect(read('*', ['-xyz', '--anything=1', 'f']).flagged).toEqual([])
  })

  it('checks the files option values name', () => {
    expect(read('-o:w', ['-o', '~/.bashrc']).flagged).toEqual(['writes a sensitive path (.bashrc)'])
    expect(read('-f:r', ['-f.env']).flagged).toEqual(['reads a sensitive path (.env)'])
  })

  it('options end at the first operand when the program says so (wrappers, builtins)', () => {
    expect(read('-n:', ['-n', '5', 'cmd', '-rf', '/'], { firstOperandEnds: true }).operands).toEqual(['cmd', '-rf', '/'])
  })

  it('words known only at run time may be options unless every option of the program is harmless', () => {
    const dynamic: Arg = { ...unknownArg('$x'), shape: '\u0000' }
    const glob: Arg = { value: '*', shape: '*', glob: true, expanded: false, text: '*' }
    expect([mayBeOption(dynamic), mayBeOption(glob), mayBeOption({ ...glob, value: 'src/*', shape: 'src/*' }), mayBeOption({ ...dynamic, operand: true })]).toEqual([true, true, false, false])
    expect(read('-v', [dynamic]).flagged).toEqual(['a word known only at run time may be an option ($x)'])
    expect(read('*', [dynamic, glob]).flagged).toEqual([])
  })
})

describe('arithmetic', () => {
  const scope = (vars: Record<string, string | null> = {}): Scope => ({ verdict: new Verdict(), depth: 0, cwd: '.', vars: new Map(Object.entries(vars)), functions: new Map() })
  const expr = (text: string) => {
    const node = parse(`((${text}))`).commands[0].command
    return node.type === 'ArithmeticCommand' ? node.expression : undefined
  }

  it('is safe on numbers, numeric specials and values the script set to numbers', () => {
    for (const text of ['1 + 2', 'RANDOM % 6', 'i = 3', '$# > 0', '0x1f']) expect(arithmeticRisk(expr(text), scope()), text).toBeUndefined()
    expect(textRisk('n * 2', scope({ n: '21' }))).toBeUndefined()
    expect(textRisk('n * 2', scope({ n: 'm + 1', m: '2' }))).toBeUndefined()
  })

  it('is not safe on values known only at run time, subscripts, or values that hold subscripts', () => {
    expect(textRisk('n + 1', scope())).toBe('evaluates $n as arithmetic (its value is known only at run time)')
    expect(textRisk('n + 1', scope({ n: null }))).toMatch(/known only at run time/)
    expect(textRisk('x', scope({ x: 'a[$(id)]' }))).toMatch(/subscript|run time/)
    expect(textRisk('a[0]', scope())).toBe('evaluates an array subscript (it can run commands)')
    expect(textRisk('$(id)', scope())).toBeDefined()
    expect(subscriptRisk('a[$(id)]')).toBeDefined()
    expect([subscriptRisk('a'), subscriptRisk('a[0]'), subscriptRisk('a[@]')]).toEqual([undefined, undefined, undefined])
  })
})
