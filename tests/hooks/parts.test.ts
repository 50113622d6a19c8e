import { describe, expect, it } from 'vitest'
import { awkEffect, sedScriptIsPlain } from '../../lib/hooks/commands/text'
import { broadPath, globSecret, resolvePath, secretPart, sensitiveWritePart } from '../../lib/hooks/paths'
import { braceAlternatives } from '../../lib/hooks/words'

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
    for (const p of ['src/a.ts', '/home/agent/project/a.ts', '/usr/src/app/index.js', '/tmp/x', '/dev/null']) expect(sensitiveWritePart(p), p).toBeUndefined()
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
