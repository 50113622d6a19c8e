import { PLANS } from '../billing/plans'
import { deadline } from '../deadline'
import { log } from '../log'
import { assertNoPlatformSecrets } from './env-guard'
import { httpGateway } from './gateway'
import type { CreatedRuntime, LogLine, RuntimeGateway, RuntimeProvider, RuntimeSpec, RuntimeTarget } from './provider'
import { RUNTIME_PORT, RuntimeProviderError } from './provider'
import {
  PROJECT_SERVICES,
  SERVICE_CREATE,
  VARIABLE_COLLECTION_UPSERT,
  VOLUME_CREATE,
  VOLUME_DELETE,
  SERVICE_INSTANCE_LIMITS_UPDATE,
  SERVICE_DOMAIN_CREATE,
  SERVICE_INSTANCE_DEPLOY,
  SERVICE_INSTANCE_REDEPLOY,
  SERVICE_INSTANCE_UPDATE,
  LATEST_DEPLOYMENT,
  DEPLOYMENT_RESTART,
  DEPLOYMENT_STOP,
  SERVICE_DELETE,
  DEPLOYMENT_LOGS,
} from './railway-queries'

/**
 * The Railway adapter of the runtime provider port: Railway's public GraphQL API over fetch only, so it runs on
 * Workers. Every document below is checked against Railway's own documentation (railwayapp/docs,
 * content/docs/integrations/api/*.md, "Manage Services / Deployments / Variables / Volumes / Domains with the
 * Public API"); where the docs only show a query and the mutation comes from Railway's schema as its clients use
 * it, the comment says so.
 *
 * Authentication (docs "Public API" → "Execute a test query"): account, workspace and OAuth tokens go in
 * `Authorization: Bearer`; a team token in `Team-Access-Token`; a project token in `Project-Access-Token` (a
 * project token is scoped to one environment of one project). `tokenKind` picks the header; default Bearer.
 *
 * Errors: Railway unreachable, a non-2xx answer or a body that is not GraphQL JSON → 502; a GraphQL `errors`
 * answer → 502 with Railway's message (the token is cut out of it should Railway ever echo it), or 404 when that
 * message says "not found"; no service of the target's name → 404, two of them → 409.
 */

export const RAILWAY_API_URL = 'https://backboard.railway.com/graphql/v2'
/** Where the runtime's volume is mounted (issue #12: "volume at `/data`"). */
export const RAILWAY_VOLUME_MOUNT = '/data'
/** Per GraphQL call, its answer's body included, unless `timeoutMs` (`RAILWAY_TIMEOUT_MS`) says otherwise. */
export const RAILWAY_TIMEOUT_MS = 15_000
/** Lines of history `logs()` asks for first (the docs' example uses `limit: 500`). */
export const RAILWAY_LOG_HISTORY = 500
/**
 * How often `logs()` asks for newer lines. Railway's API is rate-limited per token (docs "Public API" → "Rate
 * limits": 10,000 requests/hour on Pro, 1,000 on Hobby): one tail polling every 5 s costs 720 requests/hour, so a
 * handful of concurrent tails fit; the live log tail keeps one poller per agent however many clients watch.
 */
export const RAILWAY_LOG_POLL_MS = 5_000

export interface RailwayProviderOptions {
  token: string
  projectId: string
  environmentId: string
  apiUrl?: string
  fetch?: typeof fetch
  /** Which header carries `token` (see above). Default `account` (Bearer). */
  tokenKind?: 'account' | 'team' | 'project'
  /** Poll interval of `logs()`; default RAILWAY_LOG_POLL_MS. */
  logPollMs?: number
  /** How long one GraphQL call may take; default RAILWAY_TIMEOUT_MS. */
  timeoutMs?: number
}

// --- the adapter ------------------------------------------------------------------------------------------------

interface GraphQLBody {
  data?: Record<string, unknown> | null
  errors?: Array<{ message?: unknown } | null>
}

interface RailwayLog {
  timestamp: string
  message: string
  severity: string | null
}

/** What is left in Railway after a create failed and could not be cleaned up (null: nothing of that kind). */
export interface RailwayLeftovers {
  serviceId: string
  volumeId: string | null
}

/** A create that failed after `serviceCreate` and whose clean-up failed too: `leftovers` says what exists. */
export class RailwayCreateError extends RuntimeProviderError {
  constructor(
    message: string,
    status: RuntimeProviderError['status'],
    readonly leftovers: RailwayLeftovers,
  ) {
    super(message, status, 'railway')
    this.name = 'RailwayCreateError'
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })

export class RailwayProvider implements RuntimeProvider {
  readonly kind = 'railway' as const
  private readonly apiUrl: string
  private readonly fetchImpl: typeof fetch
  private readonly authHeader: [string, string]
  private readonly logPollMs: number

  constructor(private readonly opts: RailwayProviderOptions) {
    this.apiUrl = opts.apiUrl ?? RAILWAY_API_URL
    // Never store the global fetch unbound: Workers throw "Illegal invocation" on a detached fetch.
    this.fetchImpl = opts.fetch ?? ((input, init) => fetch(input, init))
    const kind = opts.tokenKind ?? 'account'
    this.authHeader =
      kind === 'project'
        ? ['project-access-token', opts.token]
        : kind === 'team'
          ? ['team-access-token', opts.token]
          : ['authorization', `Bearer ${opts.token}`]
    this.logPollMs = opts.logPollMs ?? RAILWAY_LOG_POLL_MS
  }

  // --- GraphQL transport ---

  private redact(text: string): string {
    return this.opts.token ? text.split(this.opts.token).join('[redacted]') : text
  }

  private fail(operation: string, message: string, status: RuntimeProviderError['status'] = 502): never {
    log.warn('railway.call_failed', { dependency: 'railway', operation, status })
    throw new RuntimeProviderError(this.redact(message), status, 'railway')
  }

  private async gql<T>(operation: string, query: string, variables: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    // Within the timeout (RAILWAY_TIMEOUT_MS), the answer's body included, or until the caller's own `signal` aborts.
    const bound = deadline(this.opts.timeoutMs ?? RAILWAY_TIMEOUT_MS, signal)
    let res: Response
    let body: GraphQLBody | null
    try {
      try {
        res = await this.fetchImpl(this.apiUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [this.authHeader[0]]: this.authHeader[1] },
          body: JSON.stringify({ query, variables, operationName: operation }),
          signal: bound.signal,
        })
      } catch (err) {
        if (signal?.aborted) throw err
        return this.fail(operation, `Railway unreachable (${operation})`)
      }
      body = (await res.json().catch(() => null)) as GraphQLBody | null
    } finally {
      bound.clear()
    }
    const messages = Array.isArray(body?.errors)
      ? body.errors.map((e) => (typeof e?.message === 'string' ? e.message : 'unknown error')).join('; ')
      : ''
    if (!res.ok) return this.fail(operation, `Railway answered ${res.status} to ${operation}${messages ? `: ${messages}` : ''}`)
    if (messages) return this.fail(operation, `Railway ${operation} failed: ${messages}`, /not found/i.test(messages) ? 404 : 502)
    if (!body || typeof body.data !== 'object' || body.data === null) {
      return this.fail(operation, `Railway answered ${operation} with a body that is not GraphQL JSON`)
    }
    return body.data as T
  }

  // --- lookups ---

  /** Spec "Instance and maintenance": the persisted service id first (no call), else the project's services by exact name. */
  private async serviceId(target: RuntimeTarget): Promise<string> {
    if (target.serviceId) return target.serviceId
    const data = await this.gql<{ project: { services: { edges: Array<{ node: { id: string; name: string } }> } } | null }>(
      'projectServices',
      PROJECT_SERVICES,
      { id: this.opts.projectId },
    )
    const edges = data.project?.services?.edges
    if (!Array.isArray(edges)) return this.fail('projectServices', 'Railway answered projectServices without a service list')
    const matches = edges.filter((e) => e?.node?.name === target.name)
    if (matches.length === 0) return this.fail('projectServices', `No Railway service named ${target.name}`, 404)
    if (matches.length > 1) return this.fail('projectServices', `${matches.length} Railway services are named ${target.name}`, 409)
    return matches[0].node.id
  }

  private async latestDeploymentId(serviceId: string, signal?: AbortSignal): Promise<string> {
    const data = await this.gql<{ deployments: { edges: Array<{ node: { id: string } }> } | null }>(
      'deployments',
      LATEST_DEPLOYMENT,
      { input: { projectId: this.opts.projectId, environmentId: this.opts.environmentId, serviceId }, first: 1 },
      signal,
    )
    const edges = data.deployments?.edges
    if (!Array.isArray(edges)) return this.fail('deployments', 'Railway answered deployments without a list')
    const id = edges[0]?.node?.id
    if (typeof id !== 'string') return this.fail('deployments', `Railway service ${serviceId} has no deployment`, 404)
    return id
  }

  private instance(serviceId: string) {
    return { serviceId, environmentId: this.opts.environmentId }
  }

  // --- the port ---

  async create(spec: RuntimeSpec): Promise<CreatedRuntime> {
    assertNoPlatformSecrets(spec.env)
    const plan = PLANS[spec.plan]
    if (!plan) throw new RuntimeProviderError(`Unknown plan ${spec.plan}`, 409, 'railway')
    const { projectId, environmentId } = this.opts

    const created = await this.gql<{ serviceCreate: { id: string; name: string } | null }>('serviceCreate', SERVICE_CREATE, {
      input: { projectId, name: spec.name, source: { image: spec.image } },
    })
    const serviceId = created.serviceCreate?.id
    if (typeof serviceId !== 'string') return this.fail('serviceCreate', 'Railway answered serviceCreate without a service id')

    let volumeId: string | null = null
    try {
      // The runtime program's own settings come last so the spec's env cannot override them.
      const variables = {
        ...spec.env,
        AGENT_ID: spec.agentId,
        GATEWAY_TOKEN: spec.gatewayToken,
        PORT: String(RUNTIME_PORT),
        DATA_DIR: RAILWAY_VOLUME_MOUNT,
      }
      await this.gql('variableCollectionUpsert', VARIABLE_COLLECTION_UPSERT, {
        input: { projectId, environmentId, serviceId, variables, skipDeploys: true },
      })
      const volume = await this.gql<{ volumeCreate: { id: string } | null }>('volumeCreate', VOLUME_CREATE, {
        input: { projectId, environmentId, serviceId, mountPath: RAILWAY_VOLUME_MOUNT },
      })
      volumeId = typeof volume.volumeCreate?.id === 'string' ? volume.volumeCreate.id : null
      if (!volumeId) this.fail('volumeCreate', 'Railway answered volumeCreate without a volume id')
      await this.gql('serviceInstanceLimitsUpdate', SERVICE_INSTANCE_LIMITS_UPDATE, {
        input: { serviceId, environmentId, memoryGB: plan.memoryGb, vCPUs: plan.cpus },
      })
      const domain = await this.gql<{ serviceDomainCreate: { id: string; domain: string } | null }>(
        'serviceDomainCreate',
        SERVICE_DOMAIN_CREATE,
        { input: { serviceId, environmentId, targetPort: RUNTIME_PORT } },
      )
      const host = domain.serviceDomainCreate?.domain
      if (typeof host !== 'string' || !host) this.fail('serviceDomainCreate', 'Railway answered serviceDomainCreate without a domain')
      await this.gql('serviceInstanceDeployV2', SERVICE_INSTANCE_DEPLOY, this.instance(serviceId))
      log.info('railway.runtime_created', { agentId: spec.agentId, serviceId, plan: spec.plan })
      return { serviceId, url: `https://${host}` }
    } catch (err) {
      throw await this.undoCreate(err, serviceId, volumeId)
    }
  }

  /** Deletes what a failed create made (volume, then service); the error says exactly what is left if that fails. */
  private async undoCreate(cause: unknown, serviceId: string, volumeId: string | null): Promise<Error> {
    const reason = cause instanceof Error ? this.redact(cause.message) : 'unknown error'
    const status = cause instanceof RuntimeProviderError ? cause.status : 502
    const left: RailwayLeftovers = { serviceId, volumeId }
    if (volumeId) {
      try {
        await this.gql('volumeDelete', VOLUME_DELETE, { volumeId })
        left.volumeId = null
      } catch {
        // reported below
      }
    }
    try {
      await this.gql('serviceDelete', SERVICE_DELETE, { id: serviceId })
    } catch {
      const what = [`service ${serviceId}`, ...(left.volumeId ? [`volume ${left.volumeId}`] : [])].join(', ')
      log.error('railway.create_cleanup_failed', { serviceId, volumeId: left.volumeId })
      return new RailwayCreateError(`${reason}; clean-up failed, left in Railway: ${what}`, status, left)
    }
    if (left.volumeId) {
      // The service is gone; only its volume is left.
      log.error('railway.create_cleanup_failed', { serviceId, volumeId: left.volumeId })
      return new RailwayCreateError(`${reason}; clean-up failed, left in Railway: volume ${left.volumeId}`, status, left)
    }
    log.warn('railway.create_undone', { serviceId })
    return new RuntimeProviderError(`${reason}; the half-made service was deleted`, status, 'railway')
  }

  async start(target: RuntimeTarget): Promise<void> {
    const serviceId = await this.serviceId(target)
    await this.gql('serviceInstanceRedeploy', SERVICE_INSTANCE_REDEPLOY, this.instance(serviceId))
  }

  async stop(target: RuntimeTarget): Promise<void> {
    const serviceId = await this.serviceId(target)
    const deploymentId = await this.latestDeploymentId(serviceId)
    await this.gql('deploymentStop', DEPLOYMENT_STOP, { id: deploymentId })
  }

  async restart(target: RuntimeTarget): Promise<void> {
    const serviceId = await this.serviceId(target)
    const deploymentId = await this.latestDeploymentId(serviceId)
    await this.gql('deploymentRestart', DEPLOYMENT_RESTART, { id: deploymentId })
  }

  /** Sets the image source, then deploys it (a redeploy would reuse the previous deployment's image). */
  async updateImage(target: RuntimeTarget, image: string): Promise<void> {
    const serviceId = await this.serviceId(target)
    await this.gql('serviceInstanceUpdate', SERVICE_INSTANCE_UPDATE, { ...this.instance(serviceId), input: { source: { image } } })
    await this.gql('serviceInstanceDeployV2', SERVICE_INSTANCE_DEPLOY, this.instance(serviceId))
  }

  async repair(target: RuntimeTarget): Promise<void> {
    const serviceId = await this.serviceId(target)
    await this.gql('serviceInstanceRedeploy', SERVICE_INSTANCE_REDEPLOY, this.instance(serviceId))
  }

  /** The service's `GATEWAY_TOKEN` variable set (merged, no deploy yet), then the service deployed with it. */
  async rekey(target: RuntimeTarget, gatewayToken: string): Promise<void> {
    const serviceId = await this.serviceId(target)
    const { projectId, environmentId } = this.opts
    await this.gql('variableCollectionUpsert', VARIABLE_COLLECTION_UPSERT, {
      input: { projectId, environmentId, serviceId, variables: { GATEWAY_TOKEN: gatewayToken }, skipDeploys: true },
    })
    await this.gql('serviceInstanceDeployV2', SERVICE_INSTANCE_DEPLOY, this.instance(serviceId))
  }

  async delete(target: RuntimeTarget): Promise<void> {
    const serviceId = await this.serviceId(target)
    await this.gql('serviceDelete', SERVICE_DELETE, { id: serviceId })
  }

  /**
   * The latest deployment's runtime logs: up to RAILWAY_LOG_HISTORY lines of history, then every `logPollMs` the
   * lines since the newest timestamp seen (`startDate`), lines already yielded at that same timestamp skipped.
   * Ends quietly when `signal` aborts (also mid-request); a failing call before that throws.
   */
  async *logs(target: RuntimeTarget, opts: { signal: AbortSignal }): AsyncIterable<LogLine> {
    const { signal } = opts
    if (signal.aborted) return
    let deploymentId: string
    try {
      deploymentId = await this.latestDeploymentId(await this.serviceId(target), signal)
    } catch (err) {
      if (signal.aborted) return
      throw err
    }
    let sinceMs = -Infinity
    let atSince = new Set<string>()
    let first = true
    while (!signal.aborted) {
      if (!first) {
        await sleep(this.logPollMs, signal)
        if (signal.aborted) return
      }
      let batch: RailwayLog[]
      try {
        const data = await this.gql<{ deploymentLogs: RailwayLog[] | null }>(
          'deploymentLogs',
          DEPLOYMENT_LOGS,
          first
            ? { deploymentId, limit: RAILWAY_LOG_HISTORY }
            : { deploymentId, limit: RAILWAY_LOG_HISTORY, startDate: new Date(sinceMs).toISOString() },
          signal,
        )
        if (!Array.isArray(data.deploymentLogs)) this.fail('deploymentLogs', 'Railway answered deploymentLogs without a list')
        batch = data.deploymentLogs
      } catch (err) {
        if (signal.aborted) return
        throw err
      }
      first = false
      const lines = batch
        .map((l) => ({ ms: Date.parse(l?.timestamp), log: l }))
        .filter((l) => Number.isFinite(l.ms) && typeof l.log.message === 'string')
        .sort((a, b) => a.ms - b.ms)
      for (const { ms, log: l } of lines) {
        if (ms < sinceMs) continue
        const key = `${l.timestamp}\u0000${l.severity ?? ''}\u0000${l.message}`
        if (ms === sinceMs && atSince.has(key)) continue
        if (ms > sinceMs) {
          sinceMs = ms
          atSince = new Set()
        }
        atSince.add(key)
        if (signal.aborted) return
        yield { timestamp: new Date(ms).toISOString(), stream: /^err/i.test(l.severity ?? '') ? 'stderr' : 'stdout', line: l.message }
      }
    }
  }

  gateway(target: RuntimeTarget): RuntimeGateway {
    if (!target.url || !target.gatewayToken) {
      throw new RuntimeProviderError('The runtime has no recorded URL or gateway token', 409, 'railway')
    }
    return httpGateway(target.url, target.gatewayToken, this.fetchImpl, target.gatewayTimeoutMs)
  }
}
