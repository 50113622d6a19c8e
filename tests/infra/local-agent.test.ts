import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startServer } from '../../infra/server'
import { mailedToken } from '../support/local-mail'
import { closedPort } from '../support/loopback'
import { waitFor } from '../support/wait'

/**
 * What a user of `npm start` does with an agent, through the API of the real server: sign up, sign in, provision
 * (a real runtime process on loopback), watch it go starting → running, ask it for its version, chat with it
 * (queued, delivered, answered), read a log line,
 * stop and start it, delete it (its process ends).
 */
const dataDir = mkdtempSync(join(tmpdir(), 'local-agent-'))
const ORIGIN = 'http://localhost:3000'
let server: Awaited<ReturnType<typeof startServer>>
let base = ''
let cookie = ''

beforeAll(async () => {
  const [web, backend] = [await closedPort(), await closedPort()]
  const log = vi.spyOn(console, 'log').mockImplementation(() => {})
  server = await startServer({ PORT: String(web), BACKEND_PORT: String(backend), DATA_DIR: dataDir, SESSION_SECRET: 'local-agent-test', LOG_REQUESTS: '0', PASSWORD_HASH_COST: '4', PATH: process.env.PATH })
  log.mockRestore()
  base = `http://127.0.0.1:${web}`
})
afterAll(async () => {
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0', origin: ORIGIN, cookie, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  })
  return res
}
const json = async (res: Response) => (await res.json()) as Record<string, any>

describe('npm start: an agent on this machine, through the API', () => {
  it('provision → running → debug → chat → logs → stop/start → delete', async () => {
    const email = `local-${crypto.randomUUID().slice(0, 8)}@example.com`
    const printed: string[] = []
    const info = vi.spyOn(console, 'info').mockImplementation((line) => void printed.push(String(line)))
    expect((await api('POST', '/api/register', { email, password: 'correct horse battery staple', name: 'Local' })).status).toBe(201)
    info.mockRestore()
    const csrf = await json(await api('GET', '/api/auth/csrf'))
    const login = await api('POST', '/api/auth/login', { email, password: 'correct horse battery staple' }, { 'x-csrf-token': csrf.header })
    expect(login.status).toBe(200)
    cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
    // The link the local outbox printed proves the mailbox, which the trial's paid access needs.
    expect((await api('POST', '/api/auth/verify-email', { token: mailedToken(printed.join('\n'), email) })).status).toBe(200)

    // A new account is on its 7-day trial: it may provision one agent.
    const provisioned = await api('POST', '/api/provision', { name: 'my-agent' })
    expect(provisioned.status).toBe(201)
    const { agent } = await json(provisioned)
    expect(agent.status).toBe('starting')
    expect(agent.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)

    await waitFor(async () => (await json(await api('GET', `/api/agents/${agent.id}/stats`))).status === 'running')
    const instance = await json(await api('GET', `/api/instance/${(await json(await api('GET', '/api/auth/session'))).user.id}`))
    expect(instance.status).toBe('running')

    const version = await json(await api('POST', '/api/debug', { command: 'runtime.version', agentId: agent.id }))
    expect(version).toMatchObject({ command: 'runtime.version', exitCode: 0 })
    expect(version.output.length).toBeGreaterThan(0)

    // A chat: queued, delivered by the in-process queue to the runtime process, answered (its gateway echoes).
    const queued = await api('POST', '/api/gateway/chat', { message: 'hello, local agent' })
    expect(queued.status).toBe(202)
    const { jobId, agentId } = await json(queued)
    expect(agentId).toBe(agent.id)
    await waitFor(async () => (await json(await api('GET', `/api/jobs/${jobId}`))).status === 'succeeded')
    expect(await json(await api('GET', `/api/jobs/${jobId}`))).toMatchObject({ attempts: 1, error: null, result: { sessionId: 'dashboard', reply: 'Echo: hello, local agent' } })
    const status = await json(await api('GET', '/api/gateway/status'))
    expect(status).toMatchObject({ health: 'healthy', sessions: { total: 1, active: 1, list: [{ id: 'dashboard', channel: 'webchat', messages: 2 }] } })

    // The live tail: the debug call above made the runtime log; a line arrives on the stream.
    const stream = await api('GET', `/api/logs/${agent.id}/stream`)
    expect(stream.headers.get('content-type')).toContain('text/event-stream')
    const reader = stream.body!.getReader()
    let seen = ''
    await waitFor(async () => {
      const { value } = await reader.read()
      seen += new TextDecoder().decode(value)
      return seen.includes('event: line')
    })
    await reader.cancel()

    expect((await api('POST', `/api/agents/${agent.id}/stop`)).status).toBe(200)
    await waitFor(async () => ['stopped', 'unreachable'].includes((await json(await api('GET', `/api/agents/${agent.id}/stats`))).status))
    expect((await api('POST', `/api/agents/${agent.id}/start`)).status).toBe(200)
    await waitFor(async () => (await json(await api('GET', `/api/agents/${agent.id}/stats`))).status === 'running')

    expect((await api('DELETE', `/api/agents/${agent.id}`)).status).toBe(200)
    expect((await api('GET', `/api/agents/${agent.id}`)).status).toBe(404)
    // Its process is gone: nothing answers on its port.
    await waitFor(async () => (await fetch(`${agent.url}/healthz`).then(() => false).catch(() => true)))
  })
})
