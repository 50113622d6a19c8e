/**
 * The operations of an OpenAPI 3.1 document, as the generated suites read them: the malformed-input run
 * (tests/http/openapi-requests.ts) and the common route checks (./common-route-tests.ts). Nothing here knows a
 * family: a route added later is covered because it is documented.
 */
type Schema = Record<string, any>

export interface Operation {
  method: string
  path: string
  params: Array<{ name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: Schema }>
  bodyTypes: string[]
  bodySchema?: Schema
  /** Every scheme any of the operation's security requirements names. */
  security: string[]
  /** The requirements as documented: the caller must satisfy one; an empty one (`{}`) lets anyone in. */
  requirements: string[][]
  /** Documented answers by status (`'401'`), with their descriptions. */
  responses: Record<string, { description?: string }>
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

export function operations(doc: Schema): Operation[] {
  const ops: Operation[] = []
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      if (!METHODS.includes(method)) continue
      const content = op.requestBody?.content ?? {}
      const requirements: string[][] = (op.security ?? doc.security ?? []).map((s: Schema) => Object.keys(s))
      ops.push({
        method: method.toUpperCase(),
        path,
        params: [...(item.parameters ?? []), ...(op.parameters ?? [])],
        bodyTypes: Object.keys(content),
        bodySchema: content['application/json']?.schema,
        security: [...new Set(requirements.flat())],
        requirements,
        responses: op.responses ?? {},
      })
    }
  }
  return ops
}
