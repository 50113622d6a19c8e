import { and, eq } from 'drizzle-orm'
import { execFile, spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBackendApp } from '../../../functions/backend/app'
import { INSTALL_HOME_SH, INSTALL_LINK_SH } from '../../../functions/backend/scripts.generated'
import { GENERATED_PATH, readScript, renderScriptsModule, SCRIPTS } from '../../../infra/gen-scripts'
import { installations } from '../../../schema'
import { insertApiKey, withConfig } from '../../auth/helpers'
import { useFixture, useHarness } from '../../support/harness'
import { serveFetch } from '../../support/loopback'

/** GET /install and GET /link: what they serve, that it is valid bash, and that it really registers. */
let tmp: string

const h = useHarness({ env: { HMAC_SECRET: 'test-hmac', INTERNAL_API_KEY: 'test-internal' } })
// A real socket: the scripts run in a child bash that reaches the backend with curl.
const backend = useFixture(() => serveFetch(h.backend.fetch))
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'install-scripts-'))
})
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const serveText = async (path: string, url = `http://backend.test${path}`, app = h.backend) => {
  const res = await app.request(url)
  return { res, text: await res.text() }
}
/** Async on purpose: the backend answering the script's curl lives in this same process. */
const run = (file: string, args: string[], env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0
      resolve({ code, stdout, stderr })
    })
  })
const has = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0

describe('backend setup scripts: served text', () => {
  it('GET /install is a text/plain bash script naming validate-key, register-home and the backend URL', async () => {
    const { res, text } = await serveText('/install')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(text.startsWith('#!/usr/bin/env bash\n')).toBe(true)
    expect(text).toContain('set -euo pipefail')
    expect(text).toContain('/api/validate-key')
    expect(text).toContain('/api/register-home')
    expect(text).not.toContain('/api/register-link')
    expect(text).toContain('curl -fsSL http://backend.test/install | bash')
    expect(text).toContain('PLATFORM_BACKEND_URL="${PLATFORM_BACKEND_URL:-http://backend.test}"')
    expect(text).not.toContain('__BACKEND_URL__')
  })

  it('GET /link names register-link and the backend URL', async () => {
    const { res, text } = await serveText('/link', 'https://api.example.org:8443/link')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(text).toContain('/api/validate-key')
    expect(text).toContain('/api/register-link')
    expect(text).not.toContain('/api/register-home')
    expect(text).toContain('PLATFORM_BACKEND_URL="${PLATFORM_BACKEND_URL:-https://api.example.org:8443}"')
    expect(text).not.toContain('__BACKEND_URL__')
  })

  it('BACKEND_URL, when configured, wins over the request origin (trailing slash dropped)', async () => {
    const app = createBackendApp(() => withConfig(h.services, { BACKEND_URL: 'https://backend.example.com/' }))
    const { text } = await serveText('/install', 'http://127.0.0.1:9/install', app)
    expect(text).toContain('curl -fsSL https://backend.example.com/install | bash')
    expect(text).not.toContain('127.0.0.1:9')
  })

  it('a Host that is not a plain URL is refused (it would be pasted into a shell script)', async () => {
    for (const url of ['http://x$(id).test/install', 'http://a`reboot`.test/link', "http://it's.test/install"]) {
      const { res, text } = await serveText(new URL(url).pathname, url)
      expect(res.status, url).toBe(400)
      expect(JSON.parse(text)).toEqual({ error: 'Invalid Host', code: 'INVALID_HOST' })
    }
    const app = createBackendApp(() => withConfig(h.services, { BACKEND_URL: 'https://x.test/$(id)' }))
    expect((await serveText('/install', undefined, app)).res.status).toBe(500)
  })

  it('both served scripts pass bash -n (and shellcheck, when installed)', async () => {
    const shellcheck = has('shellcheck')
    for (const path of ['/install', '/link']) {
      const file = join(tmp, `served${path.replace('/', '-')}.sh`)
      writeFileSync(file, (await serveText(path)).text)
      const syntax = await run('bash', ['-n', file], { PATH: process.env.PATH ?? '' })
      expect(syntax, path).toMatchObject({ code: 0, stderr: '' })
      if (shellcheck) {
        const lint = await run('shellcheck', [file], { PATH: process.env.PATH ?? '' })
        expect(lint.stdout, path).toBe('')
        expect(lint.code).toBe(0)
      }
    }
  })

  it('the generated module is byte for byte the files in infra/scripts', () => {
    expect(INSTALL_HOME_SH).toBe(readScript(SCRIPTS.INSTALL_HOME_SH))
    expect(INSTALL_LINK_SH).toBe(readScript(SCRIPTS.INSTALL_LINK_SH))
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(renderScriptsModule())
    expect(readFileSync(GENERATED_PATH, 'utf8').split('\n')[0]).toBe('// generated from infra/scripts by npm run gen:scripts; do not edit')
  })
})

describe('backend setup scripts: end to end against a live backend', () => {
  /** A PATH with a stub `docker` in front (`docker info` exits with `dockerStatus`). */
  function stubPath(name: string, dockerStatus: number) {
    const bin = join(tmp, name, 'bin')
    mkdirSync(bin, { recursive: true })
    writeFileSync(join(bin, 'docker'), `#!/bin/sh\nexit ${dockerStatus}\n`)
    chmodSync(join(bin, 'docker'), 0o755)
    return `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`
  }
  const fetchScript = async (path: string, name: string) => {
    const file = join(tmp, `${name}.sh`)
    writeFileSync(file, await (await fetch(`${backend.url}${path}`)).text())
    return file
  }
  const rowOf = async (userId: string, mode: string) =>
    (await h.db.select().from(installations).where(and(eq(installations.userId, userId), eq(installations.mode, mode))))[0]

  it('the home script registers the key owner with a fresh gateway token and saves it privately', async () => {
    const { alice } = h.users
    const { key } = await insertApiKey(h.db, alice.id)
    const script = await fetchScript('/install', 'home')
    const home = join(tmp, 'home-user')
    const out = await run('bash', [script], { PATH: stubPath('home', 0), HOME: home, PLATFORM_API_KEY: key })
    expect(out.stderr).toBe('')
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('Dashboard: http://localhost:3000/dashboard')
    const row = await rowOf(alice.id, 'home')
    expect(row).toMatchObject({ status: 'active' })
    expect(row.gatewayToken).toMatch(/^[0-9a-f]{64}$/)
    const saved = join(home, '.config/agent-platform/home.env')
    expect(readFileSync(saved, 'utf8')).toContain(`PLATFORM_GATEWAY_TOKEN=${row.gatewayToken}`)
    expect(readFileSync(saved, 'utf8')).toContain(`PLATFORM_USER_ID=${alice.id}`)
    // The saved token is a secret: owner only.
    expect(statSync(saved).mode & 0o077).toBe(0)
  })

  it('the link script registers a link installation with the given runtime token', async () => {
    const { bob } = h.users
    const { key } = await insertApiKey(h.db, bob.id)
    const script = await fetchScript('/link', 'link')
    const out = await run('bash', [script], {
      PATH: process.env.PATH ?? '',
      HOME: join(tmp, 'link-user'),
      PLATFORM_API_KEY: key,
      RUNTIME_URL: `${backend.url}/health`, // any HTTP answer counts as a runtime being there
      PLATFORM_GATEWAY_TOKEN: 'runtime-token-"1"',
    })
    expect(out.stderr).toBe('')
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('Dashboard: http://localhost:3000/dashboard')
    expect(await rowOf(bob.id, 'link')).toMatchObject({ gatewayToken: 'runtime-token-"1"', status: 'active' })
  })

  it('stops with a clear message: Docker not running, a bad key, an unreachable runtime, no key and no terminal', async () => {
    const carol = await h.seedUser('Carol', `carol-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const { key } = await insertApiKey(h.db, carol.id)
    const home = await fetchScript('/install', 'home-errors')
    const link = await fetchScript('/link', 'link-errors')
    const env = { HOME: join(tmp, 'carol') }

    const noDocker = await run('bash', [home], { ...env, PATH: stubPath('down', 1), PLATFORM_API_KEY: key })
    expect(noDocker.code).not.toBe(0)
    expect(noDocker.stderr).toContain('Docker is installed but not running')

    const badKey = await run('bash', [home], { ...env, PATH: stubPath('up', 0), PLATFORM_API_KEY: `sk_${'0'.repeat(64)}` })
    expect(badKey.code).not.toBe(0)
    expect(badKey.stderr).toContain('/api/validate-key answered HTTP 401: Invalid API key')

    const noRuntime = await run('bash', [link], { ...env, PATH: process.env.PATH ?? '', PLATFORM_API_KEY: key, RUNTIME_URL: 'http://127.0.0.1:9', PLATFORM_GATEWAY_TOKEN: '' })
    expect(noRuntime.code).not.toBe(0)
    expect(noRuntime.stderr).toContain('no runtime answers at http://127.0.0.1:9')

    // setsid: no controlling terminal, as under CI, so /dev/tty cannot be opened.
    if (has('setsid')) {
      const noTty = await run('setsid', ['-w', 'bash', home], { ...env, PATH: stubPath('up', 0) })
      expect(noTty.code).not.toBe(0)
      expect(noTty.stderr).toContain('no terminal to ask on; set PLATFORM_API_KEY')
    }
    expect(await h.db.select().from(installations).where(eq(installations.userId, carol.id))).toEqual([])
  })

  // util-linux `script` gives the child a terminal of its own, as a user's shell has.
  it.skipIf(!has('script'))('piped into bash without PLATFORM_API_KEY, it asks on the terminal and does not echo the key', async () => {
    const dan = await h.seedUser('Dan', `dan-${crypto.randomUUID().slice(0, 6)}@example.com`)
    const { key } = await insertApiKey(h.db, dan.id)
    const file = await fetchScript('/install', 'piped')
    // `bash < file` is `curl ... | bash`: stdin is the script itself, so the key can only come from /dev/tty.
    const child = spawn('script', ['-qec', `bash < '${file}'`, '/dev/null'], {
      env: { PATH: stubPath('piped', 0), HOME: join(tmp, 'dan') },
    })
    let out = ''
    let typed = false
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      // Typed a moment after the question, as a person would: input that arrives before `read -s` has
      // turned echo off (the prompt is printed just before) would be echoed by the terminal.
      if (!typed && out.includes('Platform API key')) {
        typed = true
        setTimeout(() => child.stdin.write(`${key}\n`), 500)
      }
    })
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    child.stdin.end()
    expect(out).toContain('Dashboard: http://localhost:3000/dashboard')
    expect(code).toBe(0)
    expect(out).not.toContain(key)
    expect(await rowOf(dan.id, 'home')).toMatchObject({ status: 'active' })
  })
})
