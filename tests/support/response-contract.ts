import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { mergePath } from 'hono/utils/url'

/**
 * Every answer the harness's apps give a test, checked against the OpenAPI document that describes them: the status
 * is one the operation documents (or one the document promises for every route, below), the headers it documents as
 * required are there, and a JSON body validates against the schema documented for that status and content type.
 * A drift then fails the test that met it, naming the operation, the status and the JSON pointer of what differs.
 * Streams, binary bodies, redirects and upgrades are checked for their status and content type only.
 */
type Schema = Record<string, any>

/** One answer that breaks its document. */
export class ContractViolation extends Error {
  override name = 'ContractViolation'
}

/**
 * What the document's description (lib/http/openapi-docs.ts, `info.description`) promises for any route, whether or
 * not the operation lists the status: the status, and the codes its `{error, code}` body may carry.
 */
const ANY_ROUTE: Record<string, string[]> = {
  '400': ['INVALID_JSON', 'VALIDATION', 'INVALID_INPUT'],
  '409': ['CONFLICT'],
  '413': ['PAYLOAD_TOO_LARGE'],
  '415': ['UNSUPPORTED_MEDIA_TYPE'],
  '500': ['INTERNAL'],
  '503': ['DATABASE_UNAVAILABLE', 'KV_UNAVAILABLE'],
}
/** A known path asked with a method it does not take (with `Allow`), and an unknown path. */
const WRONG_METHOD = { status: '405', code: 'METHOD_NOT_ALLOWED' }
const UNKNOWN_PATH = { status: '404', code: 'NOT_FOUND' }
/** The error envelope every document registers (lib/http/openapi.ts `ErrorSchema`). */
const ERROR_SCHEMA = '/components/schemas/Error'

interface Op {
  method: string
  path: string
  id: string
  pattern: RegExp
  /** Per segment: true for a `{param}` (literal segments win over parameters when two templates match). */
  params: boolean[]
  responses: Record<string, Schema>
}

const mediaType = (value: string | null) => (value ?? '').split(';')[0].trim().toLowerCase()
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json')
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')
/** A trailing slash names the same route (the document says so); the app reads `/api/x//` as `/api/x` or as `/api/x/{param}` with an empty parameter (404). */
const trimSlash = (path: string) => path.replace(/(.)\/+$/, '$1')

export interface ContractOptions {
  /** Paths the document does not describe on purpose (the document itself, its docs page): not checked. */
  undocumented?: string[]
}

export class Contract {
  private readonly ajv: Ajv2020
  private readonly ops: Op[] = []
  private readonly validators = new Map<string, ValidateFunction>()
  private readonly uri: string
  private readonly undocumented: Set<string>

  constructor(
    readonly name: string,
    private readonly doc: Schema,
    opts: ContractOptions = {},
  ) {
    this.undocumented = new Set(opts.undocumented ?? [])
    this.uri = `https://contract.invalid/${encodeURIComponent(name)}.json`
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; `example`, `discriminator` and `x-*` are not keywords here.
    this.ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: false, logger: false })
    addFormats(this.ajv)
    this.ajv.addSchema(doc, this.uri)
    for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
      const segments = path.split('/')
      const pattern = new RegExp(`^${segments.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`)
      for (const [method, op] of Object.entries<Schema>(item)) {
        if (!['get', 'put', 'post', 'delete', 'patch'].includes(method)) continue
        this.ops.push({
          method: method.toUpperCase(),
          path,
          id: op.operationId ? `${method.toUpperCase()} ${path} (${op.operationId})` : `${method.toUpperCase()} ${path}`,
          pattern,
          params: segments.map((s) => /^\{.+\}$/.test(s)),
          responses: op.responses ?? {},
        })
      }
    }
  }

  /** The operations whose path template matches `path`, the most literal first. */
  private matching(path: string): Op[] {
    const found = this.ops.filter((op) => op.pattern.test(path))
    const rank = (a: Op, b: Op) => {
      for (let i = 0; i < Math.min(a.params.length, b.params.length); i++) if (a.params[i] !== b.params[i]) return a.params[i] ? 1 : -1
      return 0
    }
    return found.sort(rank)
  }

  private validator(at: string): ValidateFunction {
    let v = this.validators.get(at)
    if (!v) this.validators.set(at, (v = this.ajv.compile({ $ref: `${this.uri}#${at}` })))
    return v
  }

  /** Throws a `ContractViolation` when `res`, the answer to `req`, differs from the document. */
  async check(req: Request, res: Response): Promise<void> {
    const method = req.method.toUpperCase()
    if (method === 'OPTIONS') return // CORS preflights: the CORS protocol, not an operation
    const path = trimSlash(new URL(req.url).pathname)
    if (this.undocumented.has(path)) return
    const lookup = method === 'HEAD' ? 'GET' : method
    const candidates = this.matching(path)
    const op = candidates.find((o) => o.method === lookup)
    const status = String(res.status)
    const where = op ? op.id : `${method} ${path} (${candidates.length ? 'a documented path, not this method' : 'no documented path'})`
    const fail = (what: string): never => {
      throw new ContractViolation(`${this.name}: ${where} answered ${status}: ${what}`)
    }

    if (!op) {
      const expected = candidates.length ? WRONG_METHOD : UNKNOWN_PATH
      if (status === expected.status) {
        if (expected === WRONG_METHOD && !res.headers.get('allow')) fail('405 without the `Allow` header the document promises')
        return this.checkError(res, [expected.code], fail)
      }
      if (ANY_ROUTE[status]) return this.checkError(res, ANY_ROUTE[status], fail)
      return fail(`not a status the document gives for ${candidates.length ? 'a method a path does not take (405)' : 'an unknown path (404)'}`)
    }

    // An accepted WebSocket upgrade: on the Node listener the app's answer is a placeholder the server drops, then
    // completes the handshake itself (the client sees the documented 101).
    const upgrading = req.headers.get('upgrade')?.toLowerCase() === 'websocket'
    if (upgrading && op.responses['101'] && res.status >= 200 && res.status < 300) return
    // `/api/keys//` may also reach a parameter route with an empty parameter (`/api/keys/{id}`), which is no resource.
    if (status === UNKNOWN_PATH.status && /\/\/+$/.test(new URL(req.url).pathname) && !op.responses[status]) return this.checkError(res, [UNKNOWN_PATH.code], fail)
    // An answer relayed from a third party (the gateway's plugins, marked `X-Plugin-Answer: relayed`) is described by
    // `default` whatever its status: a plugin's own 402 is not the gateway's 402.
    const relayed = res.headers.get('x-plugin-answer') === 'relayed' && !!op.responses.default?.headers?.['X-Plugin-Answer']
    const documented = relayed ? op.responses.default : (op.responses[status] ?? op.responses.default)
    if (!documented) {
      if (ANY_ROUTE[status]) return this.checkError(res, ANY_ROUTE[status], fail)
      return fail(`an undocumented status (documented: ${Object.keys(op.responses).join(', ')})`)
    }
    const response: Schema = documented.$ref ? this.resolve(documented.$ref) : documented
    for (const [name, header] of Object.entries<Schema>(response.headers ?? {}))
      if (header.required && res.headers.get(name) === null) fail(`the required header \`${name}\` is missing`)

    const content: Record<string, Schema> = response.content ?? {}
    const types = Object.keys(content)
    if (types.length === 0 || method === 'HEAD' || res.status === 101 || (res.status >= 300 && res.status < 400)) return
    const type = mediaType(res.headers.get('content-type'))
    // The exact type first, then a range (`audio/*`, `*/*`): a range documents bytes, never a JSON schema to check.
    const declared =
      types.find((t) => mediaType(t) === type) ??
      types.find((t) => mediaType(t) === `${type.split('/')[0]}/*`) ??
      types.find((t) => mediaType(t) === '*/*')
    if (!declared) return fail(`content type \`${type || '(none)'}\`, documented: ${types.join(', ')}`)
    // Streams and binary bodies: the type is what is documented.
    if (!isJson(type) || mediaType(declared) !== type || !content[declared].schema) return
    const statusKey = op.responses[status] && !relayed ? status : 'default'
    const at = `/${pointer('paths', op.path, op.method.toLowerCase(), 'responses', statusKey, 'content', declared, 'schema')}`
    await this.checkBody(res, at, fail)
  }

  private resolve(ref: string): Schema {
    let node: any = this.doc
    for (const part of ref.replace(/^#\//, '').split('/')) node = node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')]
    return node ?? {}
  }

  private async checkError(res: Response, codes: string[], fail: (what: string) => never) {
    const type = mediaType(res.headers.get('content-type'))
    if (!isJson(type)) fail(`content type \`${type || '(none)'}\`, documented: application/json (the error shape)`)
    const body = await this.checkBody(res, ERROR_SCHEMA, fail)
    if (!codes.includes(body?.code)) fail(`code \`${body?.code}\`, the document's answer for it is ${codes.map((c) => `\`${c}\``).join(' or ')}`)
  }

  private async checkBody(res: Response, at: string, fail: (what: string) => never) {
    const text = await res.clone().text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      fail(`a body that is not JSON: ${JSON.stringify(text.slice(0, 120))}`)
    }
    const validate = this.validator(at)
    if (!validate(body)) {
      const [e] = validate.errors ?? []
      const got = e ? valueAt(body, e.instancePath) : undefined
      fail(
        `body at \`${e?.instancePath || '/'}\` ${e?.message ?? 'is invalid'} (schema ${at}${e ? ` → ${e.schemaPath}` : ''}; value ${JSON.stringify(got)?.slice(0, 200)})`,
      )
    }
    return body as any
  }
}

function valueAt(body: unknown, instancePath: string) {
  let node: any = body
  for (const part of instancePath.split('/').slice(1)) node = node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')]
  return node
}

type App = { fetch: (req: Request, ...rest: any[]) => Response | Promise<Response>; request: (...args: any[]) => Response | Promise<Response> }

/**
 * `app` with its `fetch` and `request` (which Hono builds on `fetch`, bound to the app itself) answering only what
 * `contract` allows: an answer that breaks its document rejects with a `ContractViolation`.
 */
export function checkedApp<A extends App>(app: A, contract: Contract): A {
  const fetch = async (req: Request, ...rest: unknown[]) => {
    const res = await app.fetch(req, ...rest)
    await contract.check(req, res)
    return res
  }
  // As Hono's own `request` builds the request from a path or URL.
  const request = (input: RequestInfo | URL, init?: RequestInit, ...rest: unknown[]) => {
    if (input instanceof Request) return fetch(init ? new Request(input, init) : input, ...rest)
    const s = input.toString()
    return fetch(new Request(/^https?:\/\//.test(s) ? s : `http://localhost${mergePath('/', s)}`, init), ...rest)
  }
  return new Proxy(app, { get: (target, key, receiver) => (key === 'fetch' ? fetch : key === 'request' ? request : Reflect.get(target, key, receiver)) })
}

let contracts: { web: Contract; backend: Contract } | undefined
/**
 * The web API's and the backend's contracts, built once per process (the harness suites share one module graph per
 * worker): from the same routes `npm run gen:openapi` documents (the committed document is checked to equal it).
 */
export async function apiContracts() {
  if (!contracts) {
    const [{ webApiDocument }, { backendApiDocument }] = await Promise.all([import('../../functions/docs/document'), import('../../functions/backend/app')])
    contracts = {
      web: new Contract('web API', webApiDocument(), { undocumented: ['/api/openapi.json', '/api/docs', '/api/docs/scalar.js'] }),
      backend: new Contract('backend API', backendApiDocument(), { undocumented: ['/openapi.json', '/docs', '/docs/scalar.js'] }),
    }
  }
  return contracts
}
