import { describe, expect, it } from 'vitest'
import { classifyToolCall } from '../../lib/hooks/classify'
import { corpus } from './corpus'

describe('shell corpus', () => {
  it('holds at least 300 commands of every tier', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300)
    for (const tier of ['safe', 'dangerous', 'destructive']) expect(corpus.filter((e) => e.tier === tier).length).toBeGreaterThan(50)
  })

  it('classifies every command as expected', () => {
    const wrong = corpus
      .map(({ command, tier }) => ({ command: command.length > 120 ? `${command.slice(0, 120)}…` : command, expected: tier, got: classifyToolCall('bash', { command }) }))
      .filter((r) => r.got.tier !== r.expected)
    expect(wrong).toEqual([])
  })

  it('answers the same for the same command (deterministic)', () => {
    for (const { command } of corpus.slice(0, 50)) expect(classifyToolCall('bash', { command })).toEqual(classifyToolCall('bash', { command }))
  })
})

describe('shell tools', () => {
  it('reads the command from command, cmd or script, for bash, exec and shell in any case', () => {
    for (const tool of ['bash', 'exec', 'shell', 'Bash', 'SHELL'])
      for (const key of ['command', 'cmd', 'script']) expect(classifyToolCall(tool, { [key]: 'rm -rf /' }).tier).toBe('destructive')
    expect(classifyToolCall('exec', { cmd: 'ls' })).toEqual({ tier: 'safe', reason: 'Allowed: ls' })
  })

  it('is dangerous without a command string', () => {
    for (const input of [{}, { command: '' }, { command: '   ' }, { command: 42 }, { command: ['rm', '-rf', '/'] }])
      expect(classifyToolCall('bash', input as Record<string, unknown>)).toEqual({ tier: 'dangerous', reason: 'Shell call without a command' })
  })

  it('does not parse commands over 10 000 characters', () => {
    const result = classifyToolCall('bash', { command: `ls ${'a'.repeat(10_000)}` })
    expect(result).toEqual({ tier: 'dangerous', reason: 'Command longer than 10000 characters: not parsed' })
  })

  it('says which part decided, briefly', () => {
    expect(classifyToolCall('bash', { command: 'ls && rm -rf /' }).reason).toBe('rm: deletes / recursively')
    expect(classifyToolCall('bash', { command: 'git status; curl https://x.example' }).reason).toBe('curl: network access')
    expect(classifyToolCall('bash', { command: 'cat .env' }).reason).toBe('cat: reads a sensitive path (.env)')
    expect(classifyToolCall('bash', { command: 'ls; cat README.md | wc -l' }).reason).toBe('Allowed: ls, cat, wc')
  })

  it('never echoes a long argument in full', () => {
    const token = `sk_live_${'x'.repeat(80)}`
    for (const command of [`${token} --flag`, `echo hi > /etc/${token}`, `rm -rf /${token}`, `echo $(( 1 + ${token}`]) {
      const { reason } = classifyToolCall('bash', { command })
      expect(reason.length).toBeLessThan(120)
      expect(reason).not.toContain(token)
    }
  })
})

describe('write and read tools', () => {
  const write = (path: unknown, key = 'path') => classifyToolCall('write', { [key]: path })

  it('reads are always safe', () => {
    for (const tool of ['read', 'file_read', 'Read', 'FILE_READ']) expect(classifyToolCall(tool, { path: '/etc/shadow' })).toEqual({ tier: 'safe', reason: 'Reading files is allowed' })
  })

  it('writes ordinary paths safely, from path, file_path or filePath', () => {
    for (const key of ['path', 'file_path', 'filePath'])
      for (const path of ['src/app.ts', './README.md', '/home/agent/project/src/index.ts', 'docs/env.md', '.env.example', 'notes/credentials-howto.txt'.replace('credentials', 'creds'), 'config/.environment.ts'])
        expect(write(path, key), `${key}=${path}`).toEqual({ tier: 'safe', reason: 'Writes an ordinary path' })
    expect(classifyToolCall('file_write', { file_path: 'a.txt' }).tier).toBe('safe')
  })

  it('writes sensitive paths dangerously, however they are spelled', () => {
    const sensitive = [
      '.env', './.env', 'config/.env', '.env.local', '.env.production', '/app/.env', 'src/../.env', 'src//..//.env', '.ENV',
      '.Env.Local', '%2eenv', 'src%2F..%2F.env', 'file:///app/.env', '~/.ssh/authorized_keys', '$HOME/.ssh/config',
      '${HOME}/.aws/credentials', '/home/u/.ssh/id_rsa', '/root/.ssh/id_ed25519', 'credentials.json', '.git-credentials',
      '~/.gnupg/pubring.kbx', 'keys/id_rsa', 'certs/server.key', 'tls/cert.pem', '.npmrc', '~/.netrc', '/etc/passwd',
      '/etc/sudoers.d/agent', '/ETC/hosts', '~/.bashrc', '/home/u/.zshrc', '.git/hooks/pre-commit', '.git/config',
      '/usr/local/bin/node', '/usr/bin/env', '~/.kube/config', '~/.docker/config.json', '.ssh\\id_rsa', 'C:\\Users\\u\\.ssh\\id_rsa',
      '../../.ssh/authorized_keys', '../outside.txt', '..', '/proc/self/environ', '~/Library/LaunchAgents/x.plist',
    ]
    for (const path of sensitive) expect(write(path).tier, path).toBe('dangerous')
  })

  it('names the sensitive part in the reason', () => {
    expect(write('src/../.env')).toEqual({ tier: 'dangerous', reason: 'Writes a sensitive path (.env)' })
    expect(write('~/.ssh/authorized_keys')).toEqual({ tier: 'dangerous', reason: 'Writes a sensitive path (.ssh)' })
    expect(write('../x.txt')).toEqual({ tier: 'dangerous', reason: 'Writes outside the workspace (../x.txt)' })
  })

  it('writing a block device is destructive', () => {
    expect(write('/dev/sda')).toEqual({ tier: 'destructive', reason: 'Writes a block device (/dev/sda)' })
    expect(write('/dev/nvme0n1').tier).toBe('destructive')
  })

  it('a write without a usable path is dangerous', () => {
    for (const path of [undefined, '', 42, 'a\u0000.txt']) expect(write(path).tier).toBe('dangerous')
  })
})

describe('other tools', () => {
  it('unknown tools are dangerous', () => {
    for (const tool of ['edit', 'browser', 'delete_file', 'bash2', '', 'readfile'])
      expect(classifyToolCall(tool, {})).toMatchObject({ tier: 'dangerous', reason: expect.stringMatching(/^Unknown tool/) })
  })
})
