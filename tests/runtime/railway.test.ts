import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { PLANS, PLAN_NAMES, type PlanName } from '../../lib/billing/plans'
import { PlatformSecretError, platformSecretKeys } from '../../lib/runtime/env-guard'
import type { LogLine, RuntimeSpec, RuntimeTarget } from '../../lib/runtime/provider'
import { RUNTIME_PORT, RuntimeProviderError } from '../../lib/runtime/provider'
import { RailwayCreateError, RailwayProvider } from '../../lib/runtime/railway'
import { closedUrl } from '../support/loopback'
import { startRailwayServer, type RailwayServer } from '../support/railway-server'

const TOKEN = 'railway-test-token-5b0f3c1e9a7d'
const PROJECT = 'prj-11111111'
const ENV = 'env-22222222'

const spec = (over: Partial<RuntimeSpec> = {}): RuntimeSpec => ({
  agentId: 'a1b2c3',
  userId: 'user-1',
  name: 'agent-a1b2c3',
  image: 'ghcr.io/example/runtime:1.4.0',
  plan: 'solo',
  env: { MODEL: 'claude', TELEGRAM_BOT_TOKEN: 'bot-123' },
  gatewayToken: 'gw-token-abc',
  ...over,
})

const target = (over: Partial<RuntimeTarget> = {}): RuntimeTarget => ({
  agentId: 'a1b2c3',
  name: 'agent-a1b2c3',
  serviceId: null,
  url: null,
  gatewayToken: null,
  ...over,
})

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p
  } catch (err) {
    return err as Error
  }
  throw new Error('expected a rejection')
}

let railway: RailwayServer
let provider: RailwayProvider
let unauthorizedBefore = 0
let expectUnauthorized = 0

beforeAll(async () => {
  railway = await startRailwayServer({ token: TOKEN, projectId: PROJECT, environmentId: ENV })
})
afterAll(async () => {
  await railway.close()
})
beforeEach(() => {
  railway.calls.length = 0
  railway.rejected.length = 0
  railway.services.clear()
  railway.volumes.clear()
  railway.deployments.length = 0
  unauthorizedBefore = railway.unauthorized
  expectUnauthorized = 0
  provider = new RailwayProvider({ token: TOKEN, projectId: PROJECT, environmentId: ENV, apiUrl: railway.url, logPollMs: 25 })
  // The provider's own log lines are not under test here.
  vi.spyOn(console, 'info').mockImplementation(() => {})
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterEach(() => {
  // Every request the provider made had Railway's documented shape and the right token.
  expect(railway.rejected).toEqual([])
  expect(railway.unauthorized - unauthorizedBefore).toBe(expectUnauthorized)
  vi.restoreAllMocks()
})

describe('create', () => {
  it('makes the service, env, volume, plan resources, domain and a deployment, in that order', async () => {
    const created = await provider.create(spec())

    expect(railway.operations()).toEqual([
      'serviceCreate',
      'variableCollectionUpsert',
      'volumeCreate',
      'serviceInstanceLimitsUpdate',
      'serviceDomainCreate',
      'serviceInstanceDeployV2',
    ])
    const service = railway.services.get(created.serviceId)!
    expect(service).toMatchObject({ name: 'agent-a1b2c3', image: 'ghcr.io/example/runtime:1.4.0', limits: { memoryGB: 2, vCPUs: 1 } })
    expect(service.variables).toEqual({
      MODEL: 'claude',
      TELEGRAM_BOT_TOKEN: 'bot-123',
      AGENT_ID: 'a1b2c3',
      GATEWAY_TOKEN: 'gw-token-abc',
      PORT: String(RUNTIME_PORT),
      DATA_DIR: '/data',
    })
    expect(created.url).toBe(`https://${service.domains[0].domain}`)
    expect(service.domains[0].targetPort).toBe(RUNTIME_PORT)
    expect([...railway.volumes.values()]).toEqual([expect.objectContaining({ serviceId: created.serviceId, mountPath: '/data', environmentId: ENV })])
    expect(railway.latestDeployment(created.serviceId)).toMatchObject({ image: 'ghcr.io/example/runtime:1.4.0', status: 'SUCCESS' })
    // Variables are set without their own redeploy: the one deployment comes last.
    expect(railway.calls[1].variables).toMatchObject({ input: { projectId: PROJECT, environmentId: ENV, serviceId: created.serviceId, skipDeploys: true } })
    expect(railway.calls[0].variables).toEqual({ input: { projectId: PROJECT, name: 'agent-a1b2c3', source: { image: 'ghcr.io/example/runtime:1.4.0' } } })
  })

  it.each(PLAN_NAMES)('gives a %s runtime its plan memory and CPUs', async (plan: PlanName) => {
    const expected = { solo: [2, 1], collective: [4, 2], label: [8, 4], network: [16, 4] }[plan]
    expect([PLANS[plan].memoryGb, PLANS[plan].cpus]).toEqual(expected)
    const created = await provider.create(spec({ plan, name: `agent-${plan}` }))
    const limits = railway.calls.find((c) => c.operation === 'serviceInstanceLimitsUpdate')!.variables
    expect(limits).toEqual({ input: { serviceId: created.serviceId, environmentId: ENV, memoryGB: expected[0], vCPUs: expected[1] } })
  })

  it.each(['INTERNAL_API_KEY', 'DATABASE_URL', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'SESSION_SECRET', 'HMAC_SECRET', 'MY_SECRET_THING', 'stripe_api_key', 'RAILWAY_TOKEN', 'UPSTASH_REDIS_REST_TOKEN'])(
    'refuses a platform secret (%s) before calling Railway',
    async (key) => {
      const err = await rejection(provider.create(spec({ env: { MODEL: 'claude', [key]: 'do-not-ship-this' } })))
      expect(err).toBeInstanceOf(PlatformSecretError)
      expect(err.message).toContain(key)
      expect(err.message).not.toContain('do-not-ship-this')
      expect(railway.calls).toEqual([])
      expect(railway.services.size).toBe(0)
    },
  )

  it("keeps the runtime's own settings: the spec's env cannot override GATEWAY_TOKEN, PORT, AGENT_ID or DATA_DIR", async () => {
    const created = await provider.create(spec({ env: { GATEWAY_TOKEN: 'forged', PORT: '80', AGENT_ID: 'other', DATA_DIR: '/tmp' } }))
    expect(railway.services.get(created.serviceId)!.variables).toEqual({
      AGENT_ID: 'a1b2c3',
      GATEWAY_TOKEN: 'gw-token-abc',
      PORT: String(RUNTIME_PORT),
      DATA_DIR: '/data',
    })
  })

  it('tells platform secrets from what a runtime may need', () => {
    expect(platformSecretKeys({ GATEWAY_TOKEN: 'x', TELEGRAM_BOT_TOKEN: 'x', DISCORD_TOKEN: 'x', OPENAI_API_KEY: 'x', MODEL: 'x', NODE_ENV: 'x' })).toEqual([])
    expect(
      platformSecretKeys({
        INTERNAL_API_KEY: 'x',
        TEST_DATABASE_URL: 'x',
        stripe_price_solo: 'x',
        GOOGLE_CLIENT_SECRET: 'x',
        S3_SECRET_ACCESS_KEY: 'x',
        ENCRYPTION_KEYS: 'x',
        QSTASH_TOKEN: 'x',
        RUNTIME_PROVIDER_TOKEN: 'x',
      }),
    ).toHaveLength(8)
  })

  it.each([
    ['variableCollectionUpsert', ['serviceDelete']],
    ['volumeCreate', ['serviceDelete']],
    ['serviceInstanceLimitsUpdate', ['volumeDelete', 'serviceDelete']],
    ['serviceDomainCreate', ['volumeDelete', 'serviceDelete']],
    ['serviceInstanceDeployV2', ['volumeDelete', 'serviceDelete']],
  ])('a failing %s deletes the half-made runtime and throws 502', async (step, undo) => {
    railway.fail(step, { message: `${step} exploded` })
    const err = await rejection(provider.create(spec()))
    expect(err).toBeInstanceOf(RuntimeProviderError)
    expect(err).not.toBeInstanceOf(RailwayCreateError)
    expect((err as RuntimeProviderError).status).toBe(502)
    expect(err.message).toContain(`${step} exploded`)
    expect(err.message).toContain('deleted')
    const ops = railway.operations()
    expect(ops.slice(ops.indexOf(step) + 1)).toEqual(undo)
    expect(railway.services.size).toBe(0)
    expect(railway.volumes.size).toBe(0)
  })

  it('reports exactly what is left when the clean-up fails too', async () => {
    railway.fail('serviceDomainCreate', { message: 'domain quota reached' })
    railway.fail('serviceDelete', { httpStatus: 503 })
    const err = await rejection(provider.create(spec()))
    expect(err).toBeInstanceOf(RailwayCreateError)
    const [serviceId] = [...railway.services.keys()]
    expect((err as RailwayCreateError).leftovers).toEqual({ serviceId, volumeId: null })
    expect(err.message).toContain('domain quota reached')
    expect(err.message).toContain(`left in Railway: service ${serviceId}`)
    expect(railway.volumes.size).toBe(0) // the volume was removed before the service delete failed
  })

  it('a failing serviceCreate leaves nothing and calls nothing else', async () => {
    railway.fail('serviceCreate', { httpStatus: 500 })
    const err = await rejection(provider.create(spec()))
    expect((err as RuntimeProviderError).status).toBe(502)
    expect(railway.operations()).toEqual(['serviceCreate'])
  })
})

describe('finding the target service', () => {
  it('uses the persisted serviceId without a lookup call', async () => {
    const { service, deployment } = railway.seedService('agent-a1b2c3')
    await provider.restart(target({ serviceId: service.id }))
    expect(railway.operations()).toEqual(['deployments', 'deploymentRestart'])
    expect(deployment.restarts).toBe(1)
  })

  it('lists the project services once and matches the name exactly when serviceId is null', async () => {
    railway.seedService('agent-a1b2c3-old')
    railway.seedService('AGENT-A1B2C3')
    const { deployment } = railway.seedService('agent-a1b2c3')
    await provider.restart(target())
    expect(railway.operations()).toEqual(['projectServices', 'deployments', 'deploymentRestart'])
    expect(railway.calls[0].variables).toEqual({ id: PROJECT })
    expect(deployment.restarts).toBe(1)
  })

  it('answers 404 when no service has the name', async () => {
    railway.seedService('agent-someone-else')
    const err = await rejection(provider.start(target()))
    expect(err).toBeInstanceOf(RuntimeProviderError)
    expect((err as RuntimeProviderError).status).toBe(404)
    expect(railway.operations()).toEqual(['projectServices'])
  })

  it('answers 409 when two services share the name, touching neither', async () => {
    railway.seedService('agent-a1b2c3')
    railway.seedService('agent-a1b2c3')
    const err = await rejection(provider.delete(target()))
    expect((err as RuntimeProviderError).status).toBe(409)
    expect(railway.services.size).toBe(2)
  })

  it('answers 404 when Railway does not know the persisted serviceId', async () => {
    const err = await rejection(provider.start(target({ serviceId: 'svc-gone' })))
    expect((err as RuntimeProviderError).status).toBe(404)
    expect(err.message).toContain('Service not found')
  })
})

describe('lifecycle', () => {
  it('start redeploys the service instance', async () => {
    const { service } = railway.seedService('agent-a1b2c3')
    await provider.start(target({ serviceId: service.id }))
    expect(railway.operations()).toEqual(['serviceInstanceRedeploy'])
    expect(railway.calls[0].variables).toEqual({ serviceId: service.id, environmentId: ENV })
    expect(railway.deployments.filter((d) => d.serviceId === service.id)).toHaveLength(2)
  })

  it('stop stops the latest deployment and keeps the service', async () => {
    const { service } = railway.seedService('agent-a1b2c3')
    await provider.start(target({ serviceId: service.id })) // a newer deployment
    railway.calls.length = 0
    await provider.stop(target({ serviceId: service.id }))
    expect(railway.operations()).toEqual(['deployments', 'deploymentStop'])
    expect(railway.calls[0].variables).toEqual({ input: { projectId: PROJECT, environmentId: ENV, serviceId: service.id }, first: 1 })
    const deps = railway.deployments.filter((d) => d.serviceId === service.id)
    expect(deps.map((d) => d.stopped)).toEqual([false, true])
    expect(railway.services.has(service.id)).toBe(true)
  })

  it('restart restarts the latest deployment', async () => {
    const { service } = railway.seedService('agent-a1b2c3')
    await provider.restart(target({ serviceId: service.id }))
    const latest = railway.latestDeployment(service.id)!
    expect(railway.calls.at(-1)).toEqual({ operation: 'deploymentRestart', variables: { id: latest.id } })
    expect(latest.restarts).toBe(1)
  })

  it('restart of a service without deployments answers 404', async () => {
    const { service } = railway.seedService('agent-a1b2c3')
    railway.deployments.length = 0
    const err = await rejection(provider.restart(target({ serviceId: service.id })))
    expect((err as RuntimeProviderError).status).toBe(404)
  })

  it('repair redeploys from the current image and configuration', async () => {
    const { service } = railway.seedService('agent-a1b2c3', 'ghcr.io/example/runtime:1')
    await provider.repair(target({ serviceId: service.id }))
    expect(railway.operations()).toEqual(['serviceInstanceRedeploy'])
    expect(railway.latestDeployment(service.id)!.image).toBe('ghcr.io/example/runtime:1')
  })

  it('rekey sets GATEWAY_TOKEN on the service (merged with its other variables), then deploys it', async () => {
    const { service } = railway.seedService('agent-a1b2c3', 'ghcr.io/example/runtime:1')
    service.variables = { AGENT_ID: 'a1b2c3', GATEWAY_TOKEN: 'lost-token', PORT: '18789' }
    await provider.rekey(target({ serviceId: service.id }), 'fresh-token')
    expect(railway.operations()).toEqual(['variableCollectionUpsert', 'serviceInstanceDeployV2'])
    expect(railway.calls[0].variables).toEqual({
      input: { projectId: PROJECT, environmentId: ENV, serviceId: service.id, variables: { GATEWAY_TOKEN: 'fresh-token' }, skipDeploys: true },
    })
    expect(service.variables).toEqual({ AGENT_ID: 'a1b2c3', GATEWAY_TOKEN: 'fresh-token', PORT: '18789' })
    expect(railway.deployments.filter((d) => d.serviceId === service.id)).toHaveLength(2)
    // Found by name like every other operation when no service id is stored.
    railway.calls.length = 0
    await provider.rekey(target(), 'fresher-token')
    expect(railway.operations()).toEqual(['projectServices', 'variableCollectionUpsert', 'serviceInstanceDeployV2'])
    expect(service.variables.GATEWAY_TOKEN).toBe('fresher-token')
  })

  it('updateImage sets the image source and deploys it', async () => {
    const { service } = railway.seedService('agent-a1b2c3', 'ghcr.io/example/runtime:1')
    await provider.updateImage(target({ serviceId: service.id }), 'ghcr.io/example/runtime:2')
    expect(railway.operations()).toEqual(['serviceInstanceUpdate', 'serviceInstanceDeployV2'])
    expect(railway.calls[0].variables).toEqual({ serviceId: service.id, environmentId: ENV, input: { source: { image: 'ghcr.io/example/runtime:2' } } })
    expect(railway.latestDeployment(service.id)!.image).toBe('ghcr.io/example/runtime:2')
  })

  it('delete deletes the service', async () => {
    const { service } = railway.seedService('agent-a1b2c3')
    railway.seedService('agent-other')
    await provider.delete(target({ serviceId: service.id }))
    expect(railway.calls).toEqual([{ operation: 'serviceDelete', variables: { id: service.id } }])
    expect(railway.services.has(service.id)).toBe(false)
    expect(railway.services.size).toBe(1)
  })

  it('gateway() talks to the runtime URL with its token, and refuses a runtime without one', () => {
    expect(() => provider.gateway(target())).toThrow(RuntimeProviderError)
    expect(typeof provider.gateway(target({ url: 'https://agent.up.railway.app', gatewayToken: 'gw' })).sessions).toBe('function')
  })
})

describe('logs', () => {
  const collect = async (it: AsyncIterable<LogLine>, until: (lines: LogLine[]) => boolean, controller: AbortController) => {
    const lines: LogLine[] = []
    for await (const line of it) {
      lines.push(line)
      if (until(lines)) controller.abort()
    }
    return lines
  }

  it('streams the latest deployment history, then newer lines, and ends on abort', async () => {
    const { service, deployment: old } = railway.seedService('agent-a1b2c3')
    railway.log(old.id, 'from an older deployment')
    await provider.start(target({ serviceId: service.id }))
    const dep = railway.latestDeployment(service.id)!
    const t0 = Date.now() - 10_000
    railway.log(dep.id, 'booting', 'info', new Date(t0).toISOString())
    railway.log(dep.id, 'listening on 18789', 'info', new Date(t0 + 1000).toISOString())
    railway.log(dep.id, 'warn: slow disk', 'error', new Date(t0 + 1000).toISOString()) // same instant as the line above
    railway.calls.length = 0

    const controller = new AbortController()
    const seen: string[] = []
    const done = collect(
      provider.logs(target({ serviceId: service.id }), { signal: controller.signal }),
      (lines) => {
        seen.splice(0, seen.length, ...lines.map((l) => l.line))
        if (lines.length === 3) {
          // New lines arrive while the tail is running, one at the newest instant already seen.
          railway.log(dep.id, 'late at the same instant', 'info', new Date(t0 + 1000).toISOString())
          railway.log(dep.id, 'session opened', 'info', new Date(t0 + 2000).toISOString())
        }
        return lines.length === 5
      },
      controller,
    )
    const lines = await done
    expect(lines.map((l) => l.line)).toEqual(['booting', 'listening on 18789', 'warn: slow disk', 'late at the same instant', 'session opened'])
    expect(lines.map((l) => l.stream)).toEqual(['stdout', 'stdout', 'stderr', 'stdout', 'stdout'])
    expect(lines[0].timestamp).toBe(new Date(t0).toISOString())
    const ops = railway.operations()
    expect(ops[0]).toBe('deployments')
    expect(ops.slice(1).every((o) => o === 'deploymentLogs')).toBe(true)
    expect(railway.calls[1].variables).toEqual({ deploymentId: dep.id, limit: 500 })
    expect(railway.calls[2].variables).toMatchObject({ deploymentId: dep.id, startDate: new Date(t0 + 1000).toISOString() })

    // Aborted: no more polling.
    const count = railway.calls.length
    await new Promise((r) => setTimeout(r, 100))
    expect(railway.calls.length).toBe(count)
  })

  it('an abort while waiting for new lines ends the stream promptly', async () => {
    const { deployment, service } = railway.seedService('agent-a1b2c3')
    railway.log(deployment.id, 'only line')
    const slow = new RailwayProvider({ token: TOKEN, projectId: PROJECT, environmentId: ENV, apiUrl: railway.url, logPollMs: 60_000 })
    const controller = new AbortController()
    const lines: LogLine[] = []
    const started = Date.now()
    const done = (async () => {
      for await (const line of slow.logs(target({ serviceId: service.id }), { signal: controller.signal })) {
        lines.push(line)
        setTimeout(() => controller.abort(), 20)
      }
    })()
    await done
    expect(lines.map((l) => l.line)).toEqual(['only line'])
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it('an already aborted signal makes no call', async () => {
    const controller = new AbortController()
    controller.abort()
    const lines: LogLine[] = []
    for await (const line of provider.logs(target({ serviceId: 'svc-x' }), { signal: controller.signal })) lines.push(line)
    expect(lines).toEqual([])
    expect(railway.calls).toEqual([])
  })

  it('a failing poll ends the stream with a 502', async () => {
    const { deployment, service } = railway.seedService('agent-a1b2c3')
    railway.log(deployment.id, 'line')
    railway.fail('deploymentLogs', { httpStatus: 500 }, 1)
    const err = await rejection(
      (async () => {
        for await (const _ of provider.logs(target({ serviceId: service.id }), { signal: new AbortController().signal })) void _
      })(),
    )
    expect((err as RuntimeProviderError).status).toBe(502)
  })
})

describe('Railway failing', () => {
  it('unreachable → 502', async () => {
    const offline = new RailwayProvider({ token: TOKEN, projectId: PROJECT, environmentId: ENV, apiUrl: `${await closedUrl()}/graphql/v2` })
    const err = await rejection(offline.start(target({ serviceId: 'svc-1' })))
    expect(err).toBeInstanceOf(RuntimeProviderError)
    expect((err as RuntimeProviderError).status).toBe(502)
    expect((err as RuntimeProviderError).provider).toBe('railway')
  })

  it('an HTTP error → 502', async () => {
    const { service } = railway.seedService('agent-a1b2c3')
    railway.fail('serviceInstanceRedeploy', { httpStatus: 503 })
    const err = await rejection(provider.start(target({ serviceId: service.id })))
    expect((err as RuntimeProviderError).status).toBe(502)
    expect(err.message).toContain('503')
  })

  it('a GraphQL error → 502 with its message, never the token', async () => {
    const { service } = railway.seedService('agent-a1b2c3')
    railway.fail('serviceInstanceRedeploy', { message: `Problem processing request for token ${TOKEN}` })
    const err = await rejection(provider.start(target({ serviceId: service.id })))
    expect((err as RuntimeProviderError).status).toBe(502)
    expect(err.message).toContain('Problem processing request')
    expect(err.message).not.toContain(TOKEN)
  })

  it('a wrong token → 502 "Not Authorized", and the token is not in the error or the logs', async () => {
    const errorLog = vi.spyOn(console, 'warn')
    const wrong = new RailwayProvider({ token: 'not-the-token-9f8e', projectId: PROJECT, environmentId: ENV, apiUrl: railway.url })
    const before = railway.unauthorized
    const err = await rejection(wrong.restart(target({ serviceId: 'svc-1' })))
    expect((err as RuntimeProviderError).status).toBe(502)
    expect(err.message).toContain('Not Authorized')
    expect(railway.unauthorized).toBe(before + 1)
    const logged = errorLog.mock.calls.flat().join('\n')
    expect(logged).toContain('railway.call_failed')
    expect(logged).not.toContain('not-the-token-9f8e')
    expectUnauthorized = 1 // this test made one unauthorized request on purpose
  })
})

describe('token kinds', () => {
  it('sends a project token in Project-Access-Token', async () => {
    const projectScoped = await startRailwayServer({ token: TOKEN, projectId: PROJECT, environmentId: ENV, tokenHeader: 'project-access-token' })
    try {
      const p = new RailwayProvider({ token: TOKEN, projectId: PROJECT, environmentId: ENV, apiUrl: projectScoped.url, tokenKind: 'project' })
      const { service } = projectScoped.seedService('agent-a1b2c3')
      await p.start(target({ serviceId: service.id }))
      expect(projectScoped.operations()).toEqual(['serviceInstanceRedeploy'])
      expect(projectScoped.unauthorized).toBe(0)
      // The same token as Bearer is refused by a server expecting the project header.
      const asBearer = new RailwayProvider({ token: TOKEN, projectId: PROJECT, environmentId: ENV, apiUrl: projectScoped.url })
      expect((await rejection(asBearer.start(target({ serviceId: service.id })))).message).toContain('Not Authorized')
    } finally {
      await projectScoped.close()
    }
  })
})
