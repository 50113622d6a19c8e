import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatUptime, type RunningRuntime, startRuntime } from '../../infra/runtime/runtime'
import { probeRuntime } from '../../lib/runtime/probe'

// The runtime program in this process (its HTTP edges), and once as its own process (it ends with its parent).
const root = new URL('../..', import.meta.url).pathname
const dirs: string[] = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'runtime-program-'))
  dirs.push(d)
  return d
}
const TOKEN = 'tok_program_test'
const base = { host: '127.0.0.1', port: 0, agentId: 'p1', version: '1.0.0', image: null, readyDelayMs: 0 }
const probe = (url: string) => probeRuntime(url, { timeouts: { '/healthz': 2000, '/readyz': 2000, '/api/status': 2000 } })

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms
  let v = await fn()
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50))
    v = await fn()
  }
  return v
}

let rt: RunningRuntime
let url: string
const lines: string[] = []

beforeAll(async () => {
  rt = await startRuntime({ ...base, gatewayToken: TOKEN, dataDir: tempDir() }, (l) => lines.push(l))
  url = `http://127.0.0.1:${rt.port}`
})
afterAll(async () => {
  await rt?.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const gw = (path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers } })

describe('runtime program', () => {
  it('answers the spec shapes of its three probes', async () => {
    await until(() => probe(url), (r) => r.status === 'running')
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ ok: true, status: 'live', version: '1.0.0' })
    expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({ ready: true, failing: [], uptimeMs: expect.any(Number) })
    const status = await (await fetch(`${url}/api/status`)).json()
    expect(status).toMatchObject({ configured: true, running: true, state: 'running', version: '1.0.0', uptime: expect.stringMatching(/^\d+s$/) })
    expect(typeof status.runtime.ffmpeg.available).toBe('boolean')
  })

  it('refuses bad input: 400 invalid JSON and bad fields, 404, 405, 413', async () => {
    const bad = await gw('/api/gateway/chat', { method: 'POST', body: '{nope' })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ error: 'Invalid JSON body' })
    expect((await gw('/api/gateway/chat', { method: 'POST', body: JSON.stringify({ text: '' }) })).status).toBe(400)
    expect((await gw('/api/gateway/chat', { method: 'POST', body: JSON.stringify({ text: 'x', sessionId: '../etc' }) })).status).toBe(400)
    expect((await gw('/api/gateway/sync', { method: 'POST', body: JSON.stringify({ skills: [{ name: 1 }] }) })).status).toBe(400)
    expect((await gw('/api/gateway/diagnostics', { method: 'POST', body: JSON.stringify({}) })).status).toBe(400)
    expect((await gw('/api/gateway/nothing')).status).toBe(404)
    expect((await fetch(`${url}/other`)).status).toBe(404)
    expect((await gw('/api/gateway/sessions', { method: 'DELETE' })).status).toBe(405)
    expect((await fetch(`${url}/healthz`, { method: 'POST' })).status).toBe(405)
    const big = await gw('/api/gateway/sync', { method: 'POST', body: JSON.stringify({ skills: [], pad: 'x'.repeat(1_100_000) }) })
    expect(big.status).toBe(413)
    // still serving after all that
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
  })

  it('chat: a repeated deliveryId answers the first reply again and is handled once; a bad one is 400', async () => {
    const send = (body: unknown) => gw('/api/gateway/chat', { method: 'POST', body: JSON.stringify(body) })
    const deliveryId = crypto.randomUUID()
    const first = await send({ text: 'hello once', sessionId: 'dedupe', deliveryId })
    expect(first.status).toBe(200)
    const answer = await first.json()
    expect(answer).toEqual({ sessionId: 'dedupe', reply: 'Echo: hello once' })
    // The queue redelivers: the same answer, even with another text, and the session counts the message once.
    expect(await (await send({ text: 'hello twice', sessionId: 'dedupe', deliveryId })).json()).toEqual(answer)
    const sessions = await (await gw('/api/gateway/sessions')).json()
    expect(sessions.sessions.find((s: { id: string }) => s.id === 'dedupe')).toMatchObject({ messages: 2 })
    expect((await send({ text: 'x', deliveryId: 'no spaces allowed' })).status).toBe(400)
    // Texts up to the platform's limit are taken.
    expect((await send({ text: 'y'.repeat(32_000) })).status).toBe(200)
    expect((await send({ text: 'y'.repeat(32_001) })).status).toBe(400)
  })

  it('writes one JSON line per request (path only, never the token or the query)', async () => {
    await gw('/api/gateway/sessions?secret=abc')
    const line = lines.map((l) => JSON.parse(l)).findLast((l) => l.event === 'request' && l.path === '/api/gateway/sessions')
    expect(line).toMatchObject({ level: 'info', method: 'GET', status: 200, agentId: 'p1' })
    expect(lines.join('\n')).not.toContain(TOKEN)
    expect(lines.join('\n')).not.toContain('secret=abc')
  })

  it('without a gateway token it is in setup and its gateway refuses everyone', async () => {
    const setup = await startRuntime({ ...base, gatewayToken: '', dataDir: tempDir() }, () => {})
    try {
      const u = `http://127.0.0.1:${setup.port}`
      const r = await until(() => probe(u), (x) => x.status === 'setup')
      expect(r.status).toBe('setup')
      expect((await fetch(`${u}/api/gateway/sessions`, { headers: { authorization: 'Bearer ' } })).status).toBe(401)
    } finally {
      await setup.stop()
    }
  })

  it('a corrupt state file is set aside and the runtime starts fresh; doctor passes', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'state.json'), '{"sessions": [')
    const out: string[] = []
    const fresh = await startRuntime({ ...base, gatewayToken: TOKEN, dataDir: dir }, (l) => out.push(l))
    try {
      expect(out.some((l) => l.includes('"event":"state_corrupt"'))).toBe(true)
      const res = await fetch(`http://127.0.0.1:${fresh.port}/api/gateway/diagnostics`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ command: 'runtime.doctor' }),
      })
      const body = await res.json()
      expect(body).toMatchObject({ command: 'runtime.doctor', exitCode: 0 })
      expect(body.output).toMatch(/ok {3}data directory writable/)
    } finally {
      await fresh.stop()
    }
  })

  it('formats uptime', () => {
    expect(formatUptime(5_400)).toBe('5s')
    expect(formatUptime(3_725_000)).toBe('1h 2m 5s')
    expect(formatUptime(90_061_000)).toBe('1d 1h 1m 1s')
  })

  it('as its own process it ends when its parent goes (stdin pipe closed)', async () => {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'infra/runtime/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, PORT: '0', GATEWAY_TOKEN: TOKEN, AGENT_ID: 'p2', DATA_DIR: tempDir(), READY_DELAY_MS: '0', EXIT_WITH_PARENT: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    try {
      let out = ''
      child.stdout!.on('data', (d) => (out += d))
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
      await until(async () => out, (o) => o.includes('"event":"listening"'), 20_000)
      expect(out).toContain('"event":"listening"')
      child.stdin!.end()
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 8000))])
      expect(code).toBe(0)
      expect(out).toContain('"reason":"parent gone"')
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  })
})
