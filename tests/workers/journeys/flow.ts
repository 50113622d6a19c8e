import { eq } from 'drizzle-orm'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startRuntime, type RunningRuntime } from '../../../infra/runtime/runtime'
import { signDelivery } from '../../../lib/queue/sign'
import { agents, agentWatchdog } from '../../../schema'
import type { RailwayServer } from '../../support/railway-server'
import type { PaymentChain } from '../../support/payment-chain'
import { PaymentSessionClient, sessionHeaders } from '../../support/payment-session'
import { waitFor } from '../../support/wait'
import { acceptSocket } from '../../support/worker-socket'
import type { PluginServer } from '../../families/gateway/helpers'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { QSTASH_SIGNING_KEY, SECRETS } from '../../support/workerd-platform'
import { signUpVerified } from './accounts'
import { browser, type Browser } from './browser'

export const RAILWAY = { token: 'railway-workerd-token', projectId: 'prj-workerd', environmentId: 'env-workerd' }

/** The env the flow's Workers need beside the platform's own: agents on Railway (the suite's look-alike). */
export const flowEnv = (railway: Pick<RailwayServer, 'url'>) => ({
  LOG_REQUESTS: '0',
  PROVISIONING_ENABLED: '1',
  RUNTIME_PROVIDER_TOKEN: RAILWAY.token,
  RAILWAY_PROJECT_ID: RAILWAY.projectId,
  RAILWAY_ENVIRONMENT_ID: RAILWAY.environmentId,
  RAILWAY_API_URL: railway.url,
})

interface AgentJson {
  id: string
  name: string
  status: string
}

/**
 * The cross-family flow, as production runs it: each request to the Worker wrangler.toml routes it to, the queue
 * delivering back into the Workers, the crons fired by QStash. A Railway deploy is played by the test: the service
 * Railway was asked for runs the local runtime program (infra/runtime) with the variables the platform set on it, and
 * its `*.up.railway.app` domain resolves to it.
 */
export function flowJourneys(p: WorkerdPlatform, railway: RailwayServer, chain: PaymentChain, plugins: PluginServer) {
  const runtimes: RunningRuntime[] = []
  const dataDirs: string[] = []
  afterAll(async () => {
    await Promise.all(runtimes.map((r) => r.stop()))
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  })

  /** Railway "deploys" the newest service: the runtime program starts with its variables; its domain reaches it. */
  async function deployNewestService() {
    const service = [...railway.services.values()].at(-1)!
    const dataDir = mkdtempSync(join(tmpdir(), 'workerd-runtime-'))
    dataDirs.push(dataDir)
    const runtime = await startRuntime(
      { port: 0, host: '127.0.0.1', gatewayToken: service.variables.GATEWAY_TOKEN, agentId: service.variables.AGENT_ID ?? '', dataDir, version: '2.4.0', image: service.image, readyDelayMs: 0 },
      () => {},
    )
    runtimes.push(runtime)
    await p.mapHost(service.domains[0].domain, `http://127.0.0.1:${runtime.port}`)
    return service
  }

  let owner: Browser & { email: string; userId: string }
  let agent: AgentJson

  describe('the cross-family flow in workerd', () => {
    it('sign up and verify (auth, users); provision an agent and watch it come up (agents, the queued health wait in cron, instance)', async () => {
      owner = await signUpVerified(p)
      const res = await owner.post('/api/provision', { name: 'workerd-flow' })
      expect(res.status, await res.clone().text()).toBe(201)
      agent = ((await res.json()) as { agent: AgentJson }).agent
      expect(agent.status).toBe('starting')
      await deployNewestService()
      // The health wait was queued to the web origin: QStash delivers it to the cron Worker, which probes the runtime.
      await waitFor(async () => ((await (await owner.get(`/api/agents/${agent.id}`)).json()) as AgentJson).status === 'running', {
        ms: 20_000,
        what: 'the agent running',
      })
      const instance = await owner.get(`/api/instance/${owner.userId}`)
      expect(instance.status, await instance.clone().text()).toBe(200)
      expect(await instance.json()).toMatchObject({ status: expect.stringMatching(/running|healthy/) })
    })

    it('the watchdog cron fired by QStash probes the agent (cron): its batch is published and delivered back', async () => {
      const [before] = await p.db.select().from(agentWatchdog).where(eq(agentWatchdog.agentId, agent.id))
      p.qstash.triggerSchedule('watchdog')
      await waitFor(async () => {
        const [row] = await p.db.select().from(agentWatchdog).where(eq(agentWatchdog.agentId, agent.id))
        return !!row?.lastProbeAt && row.lastProbeAt.getTime() !== before?.lastProbeAt?.getTime()
      }, { ms: 20_000, what: 'the watchdog probing the agent' })
      const [row] = await p.db.select().from(agentWatchdog).where(eq(agentWatchdog.agentId, agent.id))
      expect(row.state).toBe('healthy')
    })

    it('chat through the queue (chat): the job is delivered to the runtime and its reply read back', async () => {
      const res = await owner.post('/api/gateway/chat', { message: 'Hello from workerd', agentId: agent.id })
      expect(res.status, await res.clone().text()).toBe(202)
      const { jobId } = (await res.json()) as { jobId: string }
      let job: { status: string; result?: { reply: string } | null } = { status: 'queued' }
      await waitFor(async () => {
        job = (await (await owner.get(`/api/jobs/${jobId}`)).json()) as typeof job
        return job.status === 'succeeded' || job.status === 'failed'
      }, { ms: 20_000, what: 'the chat job finishing' })
      expect(job).toMatchObject({ status: 'succeeded', result: { reply: 'Echo: Hello from workerd' } })
    })

    it('pay at the gateway from a payment session (payments, gateway): a deposit on the chain opens it, a voucher pays a call, its replay is refused', async () => {
      const web = { request: (path: string, init?: RequestInit) => p.fetch(path, init), origin: p.origins.app }
      const session = await PaymentSessionClient.open(web, chain, chain.payers[0], '0.05')
      const call = async (headers: Record<string, string>) =>
        p.fetch('/api/v1/gateway', { method: 'POST', body: JSON.stringify({ plugin: 'agent', prompt: 'hi' }), headers: { 'content-type': 'application/json', accept: 'application/json', ...headers } })
      const voucher = await session.voucher('0.01')
      const paid = await call(sessionHeaders(session, voucher))
      expect(paid.status, await paid.clone().text()).toBe(200)
      expect(paid.headers.get('payment-receipt')).toBe(`session:${session.sessionId}:1`)
      expect(paid.headers.get('x-session-remaining')).toBe('0.04')
      expect(await paid.json()).toMatchObject({ plugin: 'agent', received: { prompt: 'hi' } })
      const replayed = await call(sessionHeaders(session, voucher))
      expect(replayed.status).toBe(402)
      expect(await replayed.json()).toMatchObject({ error: 'voucher_failed' })
      expect(plugins.received).toHaveLength(1)
      // The same deposit cannot open a second session.
      const again = await p.fetch('/api/wallet/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ walletAddress: session.wallet.address, txHash: session.opened.txHash }) })
      expect(again.status).toBeGreaterThanOrEqual(400)
    })

    it("a permission prompt over the owner's socket (permissions' Durable Object), decided on it; a live log tail (logs' Durable Object); sign-out closes both", async () => {
      const socket = await owner.call('GET', '/api/permissions/socket', undefined, { upgrade: 'websocket' })
      const dashboard = acceptSocket(socket)
      const hook = await p.fetch('/api/hooks/classify', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRETS.INTERNAL_API_KEY}` },
        body: JSON.stringify({ toolName: 'frobnicate', toolInput: { target: 'workerd' }, agentId: agent.id }),
      })
      expect(hook.status, await hook.clone().text()).toBe(200)
      const { requestId } = (await hook.json()) as { requestId: string }
      expect(await dashboard.nextMatching((m) => m.type === 'permission_request')).toMatchObject({ requestId, toolName: 'frobnicate' })
      dashboard.ws.send(JSON.stringify({ type: 'decision', requestId, decision: 'approve' }))
      expect(await dashboard.nextMatching((m) => m.type === 'permission_decided')).toMatchObject({ requestId, status: 'approved' })
      const polled = await p.fetch(`/api/hooks/permissions/${requestId}`, { headers: { authorization: `Bearer ${SECRETS.INTERNAL_API_KEY}` } })
      expect(await polled.json()).toMatchObject({ status: 'approved' })

      const stream = await owner.get(`/api/logs/${agent.id}/stream`)
      expect(stream.status).toBe(200)
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/)
      const events = sse(stream)
      expect(await events.until((e) => e.type === 'connected')).toBeDefined()

      // Sign-out ends the session: the auth Worker tells both Durable Objects, which close what it opened.
      expect((await owner.post('/api/auth/signout')).status).toBe(200)
      expect(await dashboard.closed).toMatchObject({ code: 4401 })
      expect(await events.until((e) => e.type === 'exit')).toMatchObject({ type: 'exit' })
      expect((await owner.get(`/api/agents/${agent.id}`)).status).toBe(401)
    })

    it('refusals across the flow: signed out, another user, bad input, a forged and a replayed queue delivery', async () => {
      const stranger = browser(p)
      expect((await stranger.get(`/api/agents/${agent.id}`)).status).toBe(401)
      const other = await signUpVerified(p)
      expect((await other.get(`/api/agents/${agent.id}`)).status).toBe(404)
      const bad = await other.call('POST', '/api/provision', '{"name":')
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({ code: 'INVALID_JSON' })
      // A delivery to the watchdog without QStash's signature, and one replaying a real delivery's signature on another body.
      const unsigned = await p.fetch('/api/cron/watchdog', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
      expect(unsigned.status).toBe(401)
      // A genuine signature, replayed on another body: the signature covers the body's hash, so it is refused.
      const signedForEmpty = await signDelivery(QSTASH_SIGNING_KEY, `${p.origins.app}/api/cron/watchdog`, '{}')
      const replayed = await p.fetch('/api/cron/watchdog', {
        method: 'POST',
        body: '{"agentIds":[]}',
        headers: { 'content-type': 'application/json', 'upstash-signature': signedForEmpty },
      })
      expect(replayed.status).toBe(401)
      // The internal key is not a user's: an API call with it to a session route is refused.
      expect((await p.fetch('/api/agents', { headers: { authorization: `Bearer ${SECRETS.INTERNAL_API_KEY}` } })).status).toBe(401)
      const [stored] = await p.db.select().from(agents).where(eq(agents.id, agent.id))
      expect(stored.status).toBe('running')
      // The owner signed out above: their old cookie is refused everywhere it goes.
      expect((await owner.get('/api/keys')).status).toBe(401)
    })
  })
}

/** Server-sent events of a streaming answer, read as they come. */
function sse(res: Response) {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  const events: Array<Record<string, unknown>> = []
  return {
    async until(match: (e: Record<string, unknown>) => boolean) {
      const deadline = Date.now() + 15_000
      for (;;) {
        const found = events.find(match)
        if (found) return found
        if (Date.now() > deadline) throw new Error(`no matching event in ${JSON.stringify(events)}`)
        const { done, value } = await reader.read()
        if (done) throw new Error(`stream ended before a matching event: ${JSON.stringify(events)}`)
        buffer += decoder.decode(value, { stream: true })
        for (let i; (i = buffer.indexOf('\n\n')) >= 0; ) {
          const block = buffer.slice(0, i)
          buffer = buffer.slice(i + 2)
          const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n')
          if (data) events.push(JSON.parse(data))
        }
      }
    },
  }
}
