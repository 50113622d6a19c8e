import { type ChildProcess, spawn } from 'node:child_process'
import { closedPort } from './loopback'

/** The repository root: where `npm start` runs. */
export const repoRoot = new URL('../..', import.meta.url).pathname

export interface NpmStart {
  child: ChildProcess
  web: string
  backend: string
  /** Everything the server printed so far, stdout and stderr. */
  output(): string
  /** Resolves with the exit code once npm has exited. */
  exited: Promise<number | null>
}

/**
 * `npm start` as a user runs it, in `dataDir`, on two free ports, with only PATH and HOME from this process plus
 * `env`; resolves once the web API answers `GET /api/health` (throws with the output after `ms`).
 */
export async function npmStart(dataDir: string, env: Record<string, string> = {}, ms = 90_000): Promise<NpmStart> {
  const [web, backend] = [await closedPort(), await closedPort()]
  const child = spawn('npm', ['start'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(web), BACKEND_PORT: String(backend), DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const started: NpmStart = { child, web: `http://127.0.0.1:${web}`, backend: `http://127.0.0.1:${backend}`, output: () => output, exited }
  const end = Date.now() + ms
  while (Date.now() < end) {
    if ((await fetch(`${started.web}/api/health`).catch(() => null))?.ok) return started
    if (child.exitCode !== null) break
    await new Promise((r) => setTimeout(r, 200))
  }
  child.kill('SIGKILL')
  throw new Error(`npm start did not answer within ${ms} ms:\n${output}`)
}

/** SIGTERM, then the exit code (SIGKILL after `ms`). */
export async function npmStop(s: NpmStart, ms = 8000): Promise<number | null> {
  if (s.child.exitCode !== null) return s.child.exitCode
  s.child.kill('SIGTERM')
  const code = await Promise.race([s.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))])
  if (code === 'timeout') {
    s.child.kill('SIGKILL')
    return s.exited
  }
  return code
}
