import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { closedPort } from '../support/loopback'

// `npm start` used to run npm → sh → tsx → node: a signal to npm ended npm and sh and left the server
// listening. Now npm execs one node process, which closes its servers and stores on SIGINT and SIGTERM.
const root = new URL('../..', import.meta.url).pathname

/** True when nothing listens on the port any more (we can listen on it ourselves). */
const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })

/** Every process below `pid`, from `ps`. */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number))
  const found: number[] = []
  const walk = (p: number) => {
    for (const [child, parent] of rows) if (parent === p) (found.push(child), walk(child))
  }
  walk(pid)
  return found
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function until(check: () => boolean | Promise<boolean>, ms: number) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 200))
  }
  return check()
}

async function startAndStop(signal: 'SIGTERM' | 'SIGINT') {
  const [web, backend] = [await closedPort(), await closedPort()]
  const dataDir = mkdtempSync(join(tmpdir(), 'start-signals-'))
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(web), BACKEND_PORT: String(backend), DATA_DIR: dataDir }
  const npm: ChildProcess = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  npm.stdout!.on('data', (d) => (output += d))
  npm.stderr!.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)))
  let children: number[] = []
  try {
    const up = await until(async () => (await fetch(`http://127.0.0.1:${web}/api/health`).catch(() => null))?.ok === true, 90_000)
    expect(up, output).toBe(true)
    children = descendants(npm.pid!)
    expect(children.length, 'npm start runs the server as its child').toBeGreaterThan(0)

    npm.kill(signal)
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 8000))])
    expect(code, output).toBe(0)
    expect(await until(async () => (await portFree(web)) && (await portFree(backend)), 3000), 'both ports are free').toBe(true)
    // tsx's esbuild service ends when its parent's pipe closes: a moment after node.
    await until(() => children.every((pid) => !alive(pid)), 3000)
    expect(children.filter(alive), 'no child outlives npm').toEqual([])
    expect(output).toContain(`"event":"server.stopping","time"`)
    // The health checks above, as `npm start` prints them: one request line each.
    expect(output).toMatch(/^\{"level":"info","event":"request",.*"method":"GET","route":"\/api\/health","status":200,/m)
  } finally {
    for (const pid of [...children, npm.pid!].filter(alive)) process.kill(pid, 'SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  }
}

describe('npm start stops with its children', () => {
  it('on SIGTERM to npm: exit 0, both ports free, no process left', () => startAndStop('SIGTERM'), 120_000)
  it('on SIGINT to npm (Ctrl+C): exit 0, both ports free, no process left', () => startAndStop('SIGINT'), 120_000)
})
