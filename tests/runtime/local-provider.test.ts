import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalRuntimeProvider } from '../../infra/local-runtime-provider'
import { httpGateway } from '../../lib/runtime/gateway'
import { probeRuntime } from '../../lib/runtime/probe'
import { DIAGNOSTIC_COMMANDS, type LogLine, RuntimeProviderError, type RuntimeSpec, type RuntimeTarget } from '../../lib/runtime/provider'

// Real runtime processes (infra/runtime/main.ts) spawned by the provider on OS-chosen loopback ports.
// A 2.5 s start-up delay makes `starting` observable without racing the probe on a loaded machine.
const dataDir = mkdtempSync(join(tmpdir(), 'local-runtimes-'))
const provider = new LocalRuntimeProvider({ dataDir, readyDelayMs: 2500, runtimeVersion: '9.9.9-test' })
const TOKEN = 'gw_test_token_0123456789'
const hasFfmpeg = spawnSync('ffmpeg', ['-version']).status === 0
const pids: number[] = []

/** True while a process with that id exists. */
function probeProcess(pid: number) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const spec = (agentId: string): RuntimeSpec => ({
  agentId,
  userId: 'user-1',
  name: `agent-${agentId}`,
  image: 'local/runtime:1',
  plan: 'solo',
  env: { AGENT_NAME: `Agent ${agentId}`, NODE_OPTIONS: '--require /nonexistent.js', PATH: '/nowhere' },
  gatewayToken: TOKEN,
})
const targetOf = (agentId: string, url: string | null): RuntimeTarget => ({ agentId, name: `agent-${agentId}`, serviceId: `local-${agentId}`, url, gatewayToken: TOKEN })

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms
  let v = await fn()
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100))
    v = await fn()
  }
  return v
}

const probe = (url: string) => probeRuntime(url, { timeouts: { '/healthz': 2000, '/readyz': 2000, '/api/status': 2000 } })

let a1: RuntimeTarget
let url: string

beforeAll(async () => {
  // Something the server has in its env that a runtime must never see.
  process.env.PLATFORM_TEST_SECRET = 'do-not-leak'
  const created = await provider.create(spec('a1'))
  url = created.url
  a1 = targetOf('a1', url)
  expect(created.serviceId).toBe('local-a1')
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
})

afterAll(async () => {
  delete process.env.PLATFORM_TEST_SECRET
  await provider.close()
  for (const pid of pids) expect(probeProcess(pid), `runtime ${pid} still alive`).toBe(false)
  rmSync(dataDir, { recursive: true, force: true })
})

describe('local runtime provider', () => {
  it('a created runtime probes starting, then running', async () => {
    const first = await probe(url)
    expect(first.status).toBe('starting')
    expect(first.probeChecks.map((c) => [c.path, c.status])).toEqual([
      ['/healthz', 200],
      ['/readyz', 503],
      ['/api/status', 503],
    ])
    const later = await until(() => probe(url), (r) => r.status === 'running')
    expect(later).toMatchObject({ status: 'running', statusReason: null, runtimeVersion: '9.9.9-test', ffmpegAvailable: hasFfmpeg })
    expect(later.startedAt).not.toBeNull()
    const pid = provider.pidOf('a1')
    expect(pid).toBeGreaterThan(0)
    pids.push(pid!)
  })

  it('the runtime gets only its own env: no server secret, reserved names not overridable', async () => {
    const environ = readFileSync(`/proc/${provider.pidOf('a1')}/environ`, 'utf8').split('\0').filter(Boolean)
    const env = Object.fromEntries(environ.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
    expect(Object.keys(env).sort()).toEqual(
      ['AGENT_ID', 'AGENT_NAME', 'DATA_DIR', 'EXIT_WITH_PARENT', 'GATEWAY_TOKEN', 'HOST', 'PATH', 'PORT', 'READY_DELAY_MS', 'RUNTIME_IMAGE', 'RUNTIME_VERSION'].sort(),
    )
    expect(env.PATH).toBe(process.env.PATH)
    expect(env.DATA_DIR).toBe(join(dataDir, 'runtimes', 'a1', 'data'))
    expect(env.PLATFORM_TEST_SECRET).toBeUndefined()
  })

  it('runtime.version answers its version with exit code 0 and a measured duration', async () => {
    const r = await provider.gateway(a1).diagnostic('runtime.version')
    expect(r.command).toBe('runtime.version')
    expect(r.output).toBe('9.9.9-test')
    expect(r.exitCode).toBe(0)
    expect(r.durationMs).toBeGreaterThan(0)
    expect(r.durationMs).toBeLessThan(5000)
  })

  it('each of the ten commands runs in the runtime with real output; another command is 400', async () => {
    const gw = provider.gateway(a1)
    const out: Record<string, string> = {}
    for (const command of DIAGNOSTIC_COMMANDS) {
      const r = await gw.diagnostic(command)
      expect(r.exitCode, `${command}: ${r.output}`).toBe(0)
      expect(r.output.length, command).toBeGreaterThan(0)
      out[command] = r.output
    }
    expect(JSON.parse(out['runtime.status'])).toMatchObject({ state: 'running', running: true, pid: provider.pidOf('a1') })
    expect(JSON.parse(out['runtime.memory.stats']).rss).toBeGreaterThan(1_000_000)
    expect(JSON.parse(out['runtime.config.show'])).toMatchObject({ agentId: 'a1', version: '9.9.9-test', image: 'local/runtime:1', gatewayToken: 'set' })
    expect(out['runtime.config.show']).not.toContain(TOKEN)
    expect(out['runtime.logs.tail']).toContain('"event":"listening"')
    expect(out['runtime.doctor']).toMatch(/all required checks passed/)
    expect(out['gateway.restart']).toMatch(/gateway restarted/)
    expect(JSON.parse(out['runtime.channels.status']).map((c: { name: string }) => c.name)).toEqual(['webchat', 'telegram', 'discord', 'whatsapp'])

    const res = await fetch(`${url}/api/gateway/diagnostics`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'rm -rf /' }),
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Unknown command' })
  })

  it('logs: history first, then a live line caused by a request, until the signal aborts', async () => {
    const ac = new AbortController()
    const seen: LogLine[] = []
    const reader = (async () => {
      for await (const line of provider.logs(a1, { signal: ac.signal })) {
        seen.push(line)
        if (line.line.includes('/api/gateway/chat')) ac.abort()
      }
    })()
    await until(async () => seen.length, (n) => n > 0, 5000)
    expect(seen[0].line).toMatch(/"event":"(ffmpeg_checked|listening)"/)
    const reply = await provider.gateway(a1).chat({ text: 'hello runtime' })
    expect(reply.reply).toBe('Echo: hello runtime')
    await reader // ends once the chat request's line came and the signal aborted
    const line = seen.find((l) => l.line.includes('/api/gateway/chat'))!
    expect(line.stream).toBe('stdout')
    expect(JSON.parse(line.line)).toMatchObject({ event: 'request', method: 'POST', path: '/api/gateway/chat', status: 200 })
    expect(Date.parse(line.timestamp)).toBeGreaterThan(Date.now() - 60_000)
    expect(seen.some((l) => l.line.includes(TOKEN))).toBe(false)
  })

  it('chat sessions, sync and memory reset go through the gateway and land in the data volume', async () => {
    const gw = provider.gateway(a1)
    const first = await gw.chat({ text: 'one' })
    const again = await gw.chat({ text: 'two', sessionId: first.sessionId })
    expect(again.sessionId).toBe(first.sessionId)
    const session = (await gw.sessions()).find((s) => s.id === first.sessionId)
    expect(session).toMatchObject({ channel: 'webchat', messages: 4 })
    expect(session?.lastActive).not.toBeNull()

    await gw.sync({ skills: [{ name: 'weather', version: '1.2.0', manifest: { tools: [] } }], memories: [{ key: 'name', value: 'Ada' }], files: [] })
    expect((await gw.diagnostic('runtime.skills.list')).output).toBe('weather@1.2.0')
    const stored = () => JSON.parse(readFileSync(join(dataDir, 'runtimes', 'a1', 'data', 'state.json'), 'utf8'))
    expect(stored().memories).toEqual([{ key: 'name', value: 'Ada' }])
    await gw.resetMemory()
    expect(stored().memories).toEqual([])
    expect(JSON.parse((await gw.diagnostic('runtime.memory.stats')).output).storedMemories).toBe(0)
  })

  it('heartbeat: set and read back through the gateway, persisted; a bad frequency is 400', async () => {
    const gw = provider.gateway(a1)
    const before = Date.now()
    const job = await gw.setHeartbeat({ enabled: true, frequency: '2h' })
    expect(job).toMatchObject({ id: 'heartbeat', enabled: true, frequency: '2h', lastRun: null })
    const next = Date.parse(job.nextRun!)
    expect(next).toBeGreaterThanOrEqual(before + 2 * 3_600_000)
    expect(next).toBeLessThan(Date.now() + 2 * 3_600_000 + 1000)
    expect(await gw.cronJobs()).toEqual([job])
    const off = await gw.setHeartbeat({ enabled: false, frequency: '30m' })
    expect(off).toMatchObject({ enabled: false, frequency: '30m', nextRun: null })
    const on = await gw.setHeartbeat({ enabled: true, frequency: '1h' })
    expect(JSON.parse(readFileSync(join(dataDir, 'runtimes', 'a1', 'data', 'state.json'), 'utf8')).heartbeat).toMatchObject({ enabled: true, frequency: '1h', nextRun: on.nextRun })

    const res = await fetch(`${url}/api/gateway/cron/heartbeat`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true, frequency: '5m' }),
    })
    expect(res.status).toBe(400)
    expect(await gw.cronJobs()).toEqual([on])
  })

  it('a wrong or missing token is refused (401); the probes stay open', async () => {
    const wrong = httpGateway(url, 'not-the-token')
    await expect(wrong.sessions()).rejects.toMatchObject({ name: 'RuntimeProviderError', status: 502, message: 'Runtime answered 401' })
    await expect(wrong.diagnostic('runtime.version')).rejects.toBeInstanceOf(RuntimeProviderError)
    for (const headers of [{}, { authorization: 'Bearer ' }, { authorization: TOKEN }, { authorization: `Basic ${TOKEN}` }, { authorization: `Bearer ${TOKEN}x` }] as Array<Record<string, string>>) {
      const res = await fetch(`${url}/api/gateway/sessions`, { headers })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({ error: 'Unauthorized' })
    }
    expect((await fetch(`${url}/api/gateway/nope`)).status).toBe(401)
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
  })

  it('stop → unreachable with data kept; start → running again on the same URL with its state', async () => {
    const pid = provider.pidOf('a1')!
    await provider.stop(a1)
    expect(provider.pidOf('a1')).toBeNull()
    expect(probeProcess(pid)).toBe(false)
    const stopped = await probe(url)
    expect(stopped.status).toBe('unreachable')
    expect(stopped.probeChecks.every((c) => c.reason === 'connection refused')).toBe(true)
    expect(existsSync(join(dataDir, 'runtimes', 'a1', 'data', 'state.json'))).toBe(true)
    await provider.stop(a1) // already stopped: nothing to do

    // Two overlapping starts run one after the other: one process, not two.
    await Promise.all([provider.start(a1), provider.start(a1)])
    pids.push(provider.pidOf('a1')!)
    const runtimes = execFileSync('ps', ['-e', '-o', 'ppid=,args='], { encoding: 'utf8' })
      .split('\n')
      .filter((row) => row.trim().startsWith(`${process.pid} `) && row.includes('runtime/main.ts'))
    expect(runtimes).toHaveLength(1)
    expect((await until(() => probe(url), (r) => r.status === 'running')).status).toBe('running')
    expect((await provider.gateway(a1).cronJobs()).map((j) => j.frequency)).toEqual(['1h'])
    expect((await provider.gateway(a1).diagnostic('runtime.skills.list')).output).toBe('weather@1.2.0')
  })

  it('updateImage records the image and restarts', async () => {
    const before = provider.pidOf('a1')
    await provider.updateImage(a1, 'local/runtime:2')
    const after = provider.pidOf('a1')!
    pids.push(after)
    expect(after).not.toBe(before)
    await until(() => probe(url), (r) => r.status === 'running')
    expect(JSON.parse((await provider.gateway(a1).diagnostic('runtime.config.show')).output).image).toBe('local/runtime:2')
  })

  it('rekey restarts the runtime with the new gateway token: the old one is refused, the new one taken; runtime.json never holds it', async () => {
    const before = provider.pidOf('a1')
    await provider.rekey({ ...a1, gatewayToken: null }, 'gw_fresh_token_9876543210')
    const after = provider.pidOf('a1')!
    pids.push(after)
    expect(after).not.toBe(before)
    const sessions = (token: string) => fetch(`${url}/api/gateway/sessions`, { headers: { authorization: `Bearer ${token}` } }).then((r) => (r.body?.cancel(), r.status))
    expect(await sessions(TOKEN)).toBe(401)
    expect(await sessions('gw_fresh_token_9876543210')).toBe(200)
    expect(readFileSync(join(dataDir, 'runtimes', 'a1', 'runtime.json'), 'utf8')).not.toContain('gw_fresh_token')
    // Back to the suite's token for the tests that follow.
    await provider.rekey(a1, TOKEN)
    pids.push(provider.pidOf('a1')!)
    expect(await sessions(TOKEN)).toBe(200)
  })

  it('a crashed runtime is unreachable until repair starts it again', async () => {
    const pid = provider.pidOf('a1')!
    process.kill(pid, 'SIGKILL')
    await until(async () => provider.pidOf('a1'), (p) => p === null, 5000)
    expect((await probe(url)).status).toBe('unreachable')
    await provider.repair(a1)
    pids.push(provider.pidOf('a1')!)
    expect((await until(() => probe(url), (r) => r.status === 'running')).status).toBe('running')
  })

  it('the log history keeps the last 500 lines', async () => {
    await Promise.all(Array.from({ length: 600 }, () => fetch(`${url}/healthz`).then((r) => r.body?.cancel())))
    // The runtime's output is ordered: once this marker's line arrived, every earlier line did.
    const marker = `/marker-${crypto.randomUUID()}`
    await fetch(`${url}${marker}`)
    const waiting = new AbortController()
    for await (const l of provider.logs(a1, { signal: waiting.signal })) if (l.line.includes(marker)) waiting.abort()
    const ac = new AbortController()
    const history: LogLine[] = []
    const it = provider.logs(a1, { signal: ac.signal })[Symbol.asyncIterator]()
    // The history is there at once; the iterator then waits for live lines until aborted.
    for (let i = 0; i < 500; i++) history.push((await it.next()).value as LogLine)
    const next = it.next()
    ac.abort()
    expect((await next).done).toBe(true)
    expect(history).toHaveLength(500)
    expect(history.every((l) => JSON.parse(l.line).event === 'request')).toBe(true)
    expect(JSON.parse(history[499].line)).toMatchObject({ path: marker, status: 404 })
  })

  it('delete stops the runtime and removes its data; afterwards it is not found', async () => {
    const created = await provider.create(spec('a2'))
    const a2 = targetOf('a2', created.url)
    const pid = provider.pidOf('a2')!
    pids.push(pid)
    await expect(provider.create(spec('a2'))).rejects.toMatchObject({ status: 409 })
    // A log reader is ended by the delete, not left waiting.
    const reading = (async () => {
      let n = 0
      for await (const _ of provider.logs(a2, { signal: new AbortController().signal })) n++
      return n
    })()
    await provider.delete(a2)
    expect(await reading).toBeGreaterThan(0)
    expect(probeProcess(pid)).toBe(false)
    expect(existsSync(join(dataDir, 'runtimes', 'a2'))).toBe(false)
    expect((await probe(created.url)).status).toBe('unreachable')
    await expect(provider.start(a2)).rejects.toMatchObject({ status: 404 })
    await expect(provider.delete(a2)).rejects.toMatchObject({ status: 404 })
    expect(() => provider.gateway({ ...a2, url: null })).toThrow(RuntimeProviderError)
  })

  it('close() ends every runtime process of that provider', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'local-runtimes-close-'))
    const other = new LocalRuntimeProvider({ dataDir: dir, readyDelayMs: 0 })
    try {
      const created = await other.create(spec('c1'))
      const pid = other.pidOf('c1')!
      pids.push(pid)
      await other.close()
      expect(probeProcess(pid)).toBe(false)
      expect((await probe(created.url)).status).toBe('unreachable')
      await expect(other.create(spec('c2'))).rejects.toMatchObject({ status: 503 })

      // A new server on the same data directory starts it again from what is on disk (the token from the target).
      const next = new LocalRuntimeProvider({ dataDir: dir, readyDelayMs: 0 })
      try {
        await next.start(targetOf('c1', created.url))
        pids.push(next.pidOf('c1')!)
        expect((await until(() => probe(created.url), (r) => r.status === 'running')).status).toBe('running')
        expect((await next.gateway(targetOf('c1', null)).diagnostic('runtime.version')).output).toBe('0.0.0-local')
      } finally {
        await next.close()
      }
    } finally {
      await other.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
