import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listen } from './loopback'

/**
 * A stand-in for Railway's public GraphQL API (`POST /graphql/v2`, a third-party API with no local peer) on
 * loopback, for the operations lib/runtime/railway.ts sends. The `graphql` package is not installed, so each
 * request is checked without it, strictly: the operation header (`query|mutation name($var: Type!, ...)`) must
 * declare exactly the variables and types of Railway's documented document, `operationName` must match it, the
 * root field must be called, and the variables must have exactly the documented shape (no unknown keys, required
 * ones present, right scalar types). A malformed request is answered 400 with GraphQL `errors` and recorded in
 * `rejected`, so a test can assert there were none.
 *
 * Shapes (railwayapp/docs, content/docs/integrations/api/*.md): services are a connection
 * (`project(id) { services { edges { node { id name } } } }`), mutations that return nothing answer `true`,
 * `serviceInstanceDeployV2` answers the new deployment id, `deployments(input, first)` answers newest first,
 * `deploymentLogs` answers `[{timestamp, message, severity}]` oldest first. Errors are `{data: null, errors:
 * [{message, path}]}` with HTTP 200, as GraphQL servers answer resolver errors ("Not Authorized" for a wrong
 * token, "Service not found" / "Deployment not found" for unknown ids).
 *
 * Auth: `Authorization: Bearer <token>` by default, or `Project-Access-Token` / `Team-Access-Token` when the
 * server is started with that `tokenHeader`.
 */

type Json = Record<string, unknown>

export interface RailwayLog {
  timestamp: string
  message: string
  severity: string
}

export interface FakeService {
  id: string
  name: string
  image: string | null
  variables: Record<string, string>
  limits: { memoryGB: number; vCPUs: number } | null
  domains: Array<{ id: string; domain: string; targetPort: number | null }>
}

export interface FakeVolume {
  id: string
  name: string
  serviceId: string
  environmentId: string | null
  mountPath: string
}

export interface FakeDeployment {
  id: string
  serviceId: string
  image: string | null
  status: 'SUCCESS' | 'CRASHED' | 'REMOVED'
  createdAt: string
  stopped: boolean
  restarts: number
  logs: RailwayLog[]
}

export interface RailwayCall {
  operation: string
  variables: Json
}

export type RailwayFailure = { message: string } | { httpStatus: number }

export interface RailwayServerOptions {
  token: string
  projectId: string
  environmentId: string
  tokenHeader?: 'authorization' | 'project-access-token' | 'team-access-token'
}

export interface RailwayServer {
  url: string
  /** Every accepted operation, in order. */
  calls: RailwayCall[]
  /** Requests refused as malformed (wrong document, variables or operation name), with why. */
  rejected: string[]
  /** Requests with a missing or wrong token. */
  unauthorized: number
  services: Map<string, FakeService>
  volumes: Map<string, FakeVolume>
  deployments: FakeDeployment[]
  /** The next `times` calls of `operation` fail this way (GraphQL error, or a bare HTTP status). */
  fail(operation: string, failure: RailwayFailure, times?: number): void
  /** A service with one running deployment, as if made earlier. */
  seedService(name: string, image?: string): { service: FakeService; deployment: FakeDeployment }
  latestDeployment(serviceId: string): FakeDeployment | undefined
  /** Appends a runtime log line to a deployment (timestamp: now unless given). */
  log(deploymentId: string, message: string, severity?: string, timestamp?: string): void
  operations(): string[]
  close(): Promise<void>
}

// --- strict variable shapes -------------------------------------------------------------------------------------

type Shape = 'string' | 'string?' | 'int' | 'int?' | 'number' | 'boolean?' | 'datetime?' | 'record' | { [k: string]: Shape }

function check(value: unknown, shape: Shape, path: string): string | null {
  if (typeof shape === 'string') {
    const optional = shape.endsWith('?')
    if (value === undefined || value === null) return optional ? null : `${path} is required`
    const base = shape.replace('?', '')
    if (base === 'string' && typeof value !== 'string') return `${path} must be a String`
    if (base === 'int' && !Number.isInteger(value)) return `${path} must be an Int`
    if (base === 'number' && typeof value !== 'number') return `${path} must be a Float`
    if (base === 'boolean' && typeof value !== 'boolean') return `${path} must be a Boolean`
    if (base === 'datetime' && (typeof value !== 'string' || !Number.isFinite(Date.parse(value)))) return `${path} must be a DateTime`
    if (base === 'record') {
      if (typeof value !== 'object' || Array.isArray(value)) return `${path} must be an EnvironmentVariables object`
      for (const [k, v] of Object.entries(value as Json)) if (typeof v !== 'string') return `${path}.${k} must be a String`
    }
    return null
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${path} must be an input object`
  for (const key of Object.keys(value)) if (!(key in shape)) return `${path}.${key} is not a field of this input`
  for (const [key, sub] of Object.entries(shape)) {
    const err = check((value as Json)[key], sub, `${path}.${key}`)
    if (err) return err
  }
  return null
}

interface OperationSpec {
  kind: 'query' | 'mutation'
  root: string
  /** The documented variable declarations, exactly. */
  declarations: Record<string, string>
  variables: { [k: string]: Shape }
}

/** Railway's documented documents (railwayapp/docs, integrations/api), by operation name. */
const OPERATIONS: Record<string, OperationSpec> = {
  projectServices: { kind: 'query', root: 'project', declarations: { id: 'String!' }, variables: { id: 'string' } },
  serviceCreate: {
    kind: 'mutation',
    root: 'serviceCreate',
    declarations: { input: 'ServiceCreateInput!' },
    variables: { input: { projectId: 'string', name: 'string?', source: { image: 'string' } } },
  },
  variableCollectionUpsert: {
    kind: 'mutation',
    root: 'variableCollectionUpsert',
    declarations: { input: 'VariableCollectionUpsertInput!' },
    variables: {
      input: { projectId: 'string', environmentId: 'string', serviceId: 'string?', variables: 'record', replace: 'boolean?', skipDeploys: 'boolean?' },
    },
  },
  volumeCreate: {
    kind: 'mutation',
    root: 'volumeCreate',
    declarations: { input: 'VolumeCreateInput!' },
    variables: { input: { projectId: 'string', serviceId: 'string?', mountPath: 'string', environmentId: 'string?' } },
  },
  volumeDelete: { kind: 'mutation', root: 'volumeDelete', declarations: { volumeId: 'String!' }, variables: { volumeId: 'string' } },
  serviceInstanceLimitsUpdate: {
    kind: 'mutation',
    root: 'serviceInstanceLimitsUpdate',
    declarations: { input: 'ServiceInstanceLimitsUpdateInput!' },
    variables: { input: { serviceId: 'string', environmentId: 'string', memoryGB: 'number', vCPUs: 'number' } },
  },
  serviceDomainCreate: {
    kind: 'mutation',
    root: 'serviceDomainCreate',
    declarations: { input: 'ServiceDomainCreateInput!' },
    variables: { input: { serviceId: 'string', environmentId: 'string', targetPort: 'int?' } },
  },
  serviceInstanceDeployV2: {
    kind: 'mutation',
    root: 'serviceInstanceDeployV2',
    declarations: { serviceId: 'String!', environmentId: 'String!' },
    variables: { serviceId: 'string', environmentId: 'string' },
  },
  serviceInstanceRedeploy: {
    kind: 'mutation',
    root: 'serviceInstanceRedeploy',
    declarations: { serviceId: 'String!', environmentId: 'String!' },
    variables: { serviceId: 'string', environmentId: 'string' },
  },
  serviceInstanceUpdate: {
    kind: 'mutation',
    root: 'serviceInstanceUpdate',
    declarations: { serviceId: 'String!', environmentId: 'String!', input: 'ServiceInstanceUpdateInput!' },
    variables: { serviceId: 'string', environmentId: 'string', input: { source: { image: 'string' } } },
  },
  deployments: {
    kind: 'query',
    root: 'deployments',
    declarations: { input: 'DeploymentListInput!', first: 'Int' },
    variables: { input: { projectId: 'string', environmentId: 'string', serviceId: 'string' }, first: 'int?' },
  },
  deploymentRestart: { kind: 'mutation', root: 'deploymentRestart', declarations: { id: 'String!' }, variables: { id: 'string' } },
  deploymentStop: { kind: 'mutation', root: 'deploymentStop', declarations: { id: 'String!' }, variables: { id: 'string' } },
  serviceDelete: { kind: 'mutation', root: 'serviceDelete', declarations: { id: 'String!' }, variables: { id: 'string' } },
  deploymentLogs: {
    kind: 'query',
    root: 'deploymentLogs',
    declarations: { deploymentId: 'String!', limit: 'Int', startDate: 'DateTime' },
    variables: { deploymentId: 'string', limit: 'int?', startDate: 'datetime?' },
  },
}

/** `query name($a: T!, $b: U) {` → kind, name and the declarations. */
function parseHeader(query: string): { kind: string; name: string; declarations: Record<string, string> } | null {
  const m = /^\s*(query|mutation)\s+(\w+)\s*(?:\(([^)]*)\))?\s*\{/.exec(query)
  if (!m) return null
  const declarations: Record<string, string> = {}
  for (const part of (m[3] ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const d = /^\$(\w+)\s*:\s*([\w!\[\]]+)$/.exec(part)
    if (!d) return null
    declarations[d[1]] = d[2]
  }
  return { kind: m[1], name: m[2], declarations }
}

/** The root field's arguments as `{argument: variableName}`, e.g. `serviceDelete(id: $id)` → `{id: 'id'}`; null when not called. */
function rootArguments(query: string, root: string): Record<string, string> | null {
  const body = query.slice(query.indexOf('{'))
  const m = new RegExp(`\\b${root}\\s*\\(([^)]*)\\)`).exec(body)
  if (!m) return null
  const args: Record<string, string> = {}
  for (const part of m[1].split(',').map((p) => p.trim()).filter(Boolean)) {
    const a = /^(\w+)\s*:\s*\$(\w+)$/.exec(part)
    if (!a) return null
    args[a[1]] = a[2]
  }
  return args
}

class GraphQLError extends Error {}

let counter = 0
const newId = (prefix: string) => `${prefix}-${(++counter).toString(16).padStart(8, '0')}-${Math.random().toString(16).slice(2, 10)}`

export async function startRailwayServer(opts: RailwayServerOptions): Promise<RailwayServer> {
  const header = opts.tokenHeader ?? 'authorization'
  const expected = header === 'authorization' ? `Bearer ${opts.token}` : opts.token
  const calls: RailwayCall[] = []
  const rejected: string[] = []
  const services = new Map<string, FakeService>()
  const volumes = new Map<string, FakeVolume>()
  const deployments: FakeDeployment[] = []
  const failures = new Map<string, Array<RailwayFailure>>()
  let unauthorized = 0

  const latest = (serviceId: string) => deployments.filter((d) => d.serviceId === serviceId).at(-1)
  const service = (id: unknown) => {
    const s = services.get(String(id))
    if (!s) throw new GraphQLError('Service not found')
    return s
  }
  const deployment = (id: unknown) => {
    const d = deployments.find((x) => x.id === id)
    if (!d) throw new GraphQLError('Deployment not found')
    return d
  }
  const scoped = (projectId: unknown, environmentId: unknown) => {
    if (projectId !== undefined && projectId !== opts.projectId) throw new GraphQLError('Project not found')
    if (environmentId !== undefined && environmentId !== null && environmentId !== opts.environmentId) throw new GraphQLError('Environment not found')
  }
  const deploy = (s: FakeService): FakeDeployment => {
    // Creation times strictly increase, so "newest first" is well defined even within one millisecond.
    const last = deployments.at(-1)
    const createdAt = new Date(Math.max(Date.now(), last ? Date.parse(last.createdAt) + 1 : 0)).toISOString()
    const d: FakeDeployment = { id: newId('dep'), serviceId: s.id, image: s.image, status: 'SUCCESS', createdAt, stopped: false, restarts: 0, logs: [] }
    deployments.push(d)
    return d
  }

  const resolvers: Record<string, (v: Json) => unknown> = {
    projectServices: (v) => {
      scoped(v.id, undefined)
      return { project: { services: { edges: [...services.values()].map((s) => ({ node: { id: s.id, name: s.name } })) } } }
    },
    serviceCreate: (v) => {
      const input = v.input as { projectId: string; name?: string; source: { image: string } }
      scoped(input.projectId, undefined)
      const s: FakeService = { id: newId('svc'), name: input.name ?? `service-${counter}`, image: input.source.image, variables: {}, limits: null, domains: [] }
      services.set(s.id, s)
      return { serviceCreate: { id: s.id, name: s.name } }
    },
    variableCollectionUpsert: (v) => {
      const input = v.input as { projectId: string; environmentId: string; serviceId: string; variables: Record<string, string>; replace?: boolean }
      scoped(input.projectId, input.environmentId)
      const s = service(input.serviceId)
      s.variables = input.replace ? { ...input.variables } : { ...s.variables, ...input.variables }
      return { variableCollectionUpsert: true }
    },
    volumeCreate: (v) => {
      const input = v.input as { projectId: string; serviceId: string; mountPath: string; environmentId?: string }
      scoped(input.projectId, input.environmentId)
      const s = service(input.serviceId)
      if ([...volumes.values()].some((x) => x.serviceId === s.id)) throw new GraphQLError('Service already has a volume')
      const vol: FakeVolume = { id: newId('vol'), name: `${s.name}-volume`, serviceId: s.id, environmentId: input.environmentId ?? null, mountPath: input.mountPath }
      volumes.set(vol.id, vol)
      return { volumeCreate: { id: vol.id, name: vol.name } }
    },
    volumeDelete: (v) => {
      if (!volumes.delete(String(v.volumeId))) throw new GraphQLError('Volume not found')
      return { volumeDelete: true }
    },
    serviceInstanceLimitsUpdate: (v) => {
      const input = v.input as { serviceId: string; environmentId: string; memoryGB: number; vCPUs: number }
      scoped(undefined, input.environmentId)
      service(input.serviceId).limits = { memoryGB: input.memoryGB, vCPUs: input.vCPUs }
      return { serviceInstanceLimitsUpdate: true }
    },
    serviceDomainCreate: (v) => {
      const input = v.input as { serviceId: string; environmentId: string; targetPort?: number }
      scoped(undefined, input.environmentId)
      const s = service(input.serviceId)
      if (s.domains.length > 0) throw new GraphQLError('Service already has a railway provided domain')
      const d = { id: newId('dom'), domain: `${s.name}-production.up.railway.app`, targetPort: input.targetPort ?? null }
      s.domains.push(d)
      return { serviceDomainCreate: { id: d.id, domain: d.domain } }
    },
    serviceInstanceDeployV2: (v) => {
      scoped(undefined, v.environmentId)
      return { serviceInstanceDeployV2: deploy(service(v.serviceId)).id }
    },
    serviceInstanceRedeploy: (v) => {
      scoped(undefined, v.environmentId)
      const s = service(v.serviceId)
      const prev = latest(s.id)
      if (!prev) throw new GraphQLError('No deployment to redeploy')
      const d = deploy(s)
      d.image = prev.image
      return { serviceInstanceRedeploy: true }
    },
    serviceInstanceUpdate: (v) => {
      scoped(undefined, v.environmentId)
      service(v.serviceId).image = (v.input as { source: { image: string } }).source.image
      return { serviceInstanceUpdate: true }
    },
    deployments: (v) => {
      const input = v.input as { projectId: string; environmentId: string; serviceId: string }
      scoped(input.projectId, input.environmentId)
      const list = deployments.filter((d) => d.serviceId === input.serviceId).reverse()
      const first = typeof v.first === 'number' ? v.first : list.length
      return {
        deployments: { edges: list.slice(0, first).map((d) => ({ node: { id: d.id, status: d.status, createdAt: d.createdAt } })) },
      }
    },
    deploymentRestart: (v) => {
      const d = deployment(v.id)
      d.restarts += 1
      d.stopped = false
      d.status = 'SUCCESS'
      return { deploymentRestart: true }
    },
    deploymentStop: (v) => {
      deployment(v.id).stopped = true
      return { deploymentStop: true }
    },
    serviceDelete: (v) => {
      const s = service(v.id)
      services.delete(s.id)
      for (let i = deployments.length - 1; i >= 0; i--) if (deployments[i].serviceId === s.id) deployments.splice(i, 1)
      return { serviceDelete: true }
    },
    deploymentLogs: (v) => {
      const d = deployment(v.deploymentId)
      const since = typeof v.startDate === 'string' ? Date.parse(v.startDate) : -Infinity
      const lines = d.logs.filter((l) => Date.parse(l.timestamp) >= since)
      const limit = typeof v.limit === 'number' ? v.limit : lines.length
      return { deploymentLogs: lines.slice(Math.max(0, lines.length - limit)) }
    },
  }

  function answer(res: ServerResponse, status: number, body: unknown) {
    const text = JSON.stringify(body)
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  }

  function handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    if (req.method !== 'POST' || req.url !== '/graphql/v2') return answer(res, 404, { errors: [{ message: 'Not Found' }] })
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      rejected.push('content-type is not application/json')
      return answer(res, 400, { errors: [{ message: 'Must provide query string.' }] })
    }
    if (req.headers[header] !== expected) {
      unauthorized += 1
      return answer(res, 200, { data: null, errors: [{ message: 'Not Authorized' }] })
    }
    let body: { query?: unknown; variables?: unknown; operationName?: unknown }
    try {
      body = JSON.parse(raw)
    } catch {
      rejected.push('body is not JSON')
      return answer(res, 400, { errors: [{ message: 'Unexpected token in JSON body' }] })
    }
    const refuse = (why: string) => {
      rejected.push(why)
      return answer(res, 400, { errors: [{ message: why, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] })
    }
    if (typeof body.query !== 'string') return refuse('query is not a string')
    const head = parseHeader(body.query)
    if (!head) return refuse('operation header is not `query|mutation name($var: Type, ...) {`')
    const spec = OPERATIONS[head.name]
    if (!spec) return refuse(`unknown operation ${head.name}`)
    if (body.operationName !== undefined && body.operationName !== head.name) return refuse(`operationName ${String(body.operationName)} is not ${head.name}`)
    if (head.kind !== spec.kind) return refuse(`${head.name} must be a ${spec.kind}`)
    const args = rootArguments(body.query, spec.root)
    if (!args) return refuse(`${head.name} does not call ${spec.root}(...)`)
    // Railway's documented documents pass each variable to the argument of the same name: `root(id: $id, ...)`.
    const passed = JSON.stringify(Object.entries(args).sort())
    const expectedArgs = JSON.stringify(Object.keys(spec.declarations).map((k) => [k, k]).sort())
    if (passed !== expectedArgs) return refuse(`${head.name} calls ${spec.root} with ${passed}, Railway documents ${expectedArgs}`)
    const declared = JSON.stringify(Object.entries(head.declarations).sort())
    const documented = JSON.stringify(Object.entries(spec.declarations).sort())
    if (declared !== documented) return refuse(`${head.name} declares ${declared}, Railway documents ${documented}`)
    for (const name of Object.keys(spec.declarations)) {
      if (!body.query.includes(`$${name}`, body.query.indexOf('{'))) return refuse(`${head.name} declares $${name} but never uses it`)
    }
    const variables = (body.variables ?? {}) as Json
    const bad = check(variables, spec.variables, 'variables')
    if (bad) return refuse(`${head.name}: ${bad}`)

    const queued = failures.get(head.name)
    const failure = queued?.shift()
    if (queued && queued.length === 0) failures.delete(head.name)
    calls.push({ operation: head.name, variables: structuredClone(variables) })
    if (failure && 'httpStatus' in failure) return answer(res, failure.httpStatus, { errors: [{ message: 'Internal Server Error' }] })
    if (failure) return answer(res, 200, { data: null, errors: [{ message: failure.message, path: [spec.root] }] })
    try {
      return answer(res, 200, { data: resolvers[head.name](variables) })
    } catch (err) {
      if (err instanceof GraphQLError) return answer(res, 200, { data: null, errors: [{ message: err.message, path: [spec.root] }] })
      throw err
    }
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'))
      } catch (err) {
        answer(res, 500, { errors: [{ message: String(err) }] })
      }
    })
  })
  const loopback = await listen(server)

  return {
    url: `${loopback.url}/graphql/v2`,
    calls,
    rejected,
    get unauthorized() {
      return unauthorized
    },
    services,
    volumes,
    deployments,
    fail(operation, failure, times = 1) {
      const list = failures.get(operation) ?? []
      for (let i = 0; i < times; i++) list.push(failure)
      failures.set(operation, list)
    },
    seedService(name, image = 'ghcr.io/example/runtime:1') {
      const s: FakeService = { id: newId('svc'), name, image, variables: {}, limits: null, domains: [] }
      services.set(s.id, s)
      return { service: s, deployment: deploy(s) }
    },
    latestDeployment: latest,
    log(deploymentId, message, severity = 'info', timestamp = new Date().toISOString()) {
      const d = deployments.find((x) => x.id === deploymentId)
      if (!d) throw new Error(`no deployment ${deploymentId}`)
      d.logs.push({ timestamp, message, severity })
    },
    operations: () => calls.map((c) => c.operation),
    close: loopback.close,
  }
}
