import { describe, expect, it } from 'vitest'
import { backendApiDocument } from '../../functions/backend/app'
import { webApiDocument } from '../../functions/docs/document'
import { ERRORS, type ErrorCode } from '../../lib/http/errors'

/**
 * Every error a route documents (4xx, 5xx) is the platform's `{error, code}`: its JSON schema requires `code`,
 * so a client generated from either document can switch on it. The one exception is marked `x-relayed`: an answer
 * that may be a third party's own, passed on unchanged (the gateway relays a plugin's 5xx).
 */
type Schema = { $ref?: string; required?: string[]; properties?: Record<string, unknown>; allOf?: Schema[] }
type Response = { $ref?: string; content?: Record<string, { schema?: Schema }>; 'x-relayed'?: boolean }
type Doc = { paths?: Record<string, Record<string, { responses?: Record<string, Response> }>>; components?: { schemas?: Record<string, Schema>; responses?: Record<string, Response> } }

const refName = (ref: string) => ref.split('/').pop()!

/** The names a schema requires, following `$ref` and `allOf`. */
function requiredOf(doc: Doc, schema: Schema | undefined): string[] {
  if (!schema) return []
  if (schema.$ref) return requiredOf(doc, doc.components?.schemas?.[refName(schema.$ref)])
  return [...(schema.required ?? []), ...(schema.allOf ?? []).flatMap((s) => requiredOf(doc, s))]
}

/** `method path status` of every documented error response whose JSON schema does not require `code`. */
function errorsWithoutCode(doc: Doc) {
  const missing: string[] = []
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, declared] of Object.entries(op.responses ?? {})) {
        if (!/^[45]/.test(status)) continue
        const res = declared.$ref ? doc.components?.responses?.[refName(declared.$ref)] : declared
        if (res?.['x-relayed']) continue // a third party's answer passed on as is (the gateway's plugins): its body is theirs
        const schema = res?.content?.['application/json']?.schema
        if (!requiredOf(doc, schema).includes('code')) missing.push(`${method} ${path} ${status}`)
      }
    }
  }
  return missing
}

/**
 * `method path status CODE` of every catalogue code a documented error response names (in backticks) whose status
 * is not that response's: the catalogue decides the status, so the document must put the code under it.
 */
function codesUnderAnotherStatus(doc: Doc) {
  const wrong: string[] = []
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, declared] of Object.entries(op.responses ?? {})) {
        const description = (declared as { description?: string }).description ?? ''
        for (const [, code] of description.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) {
          const entry = ERRORS[code as ErrorCode]
          if (entry && String(entry[0]) !== status) wrong.push(`${method} ${path} ${status} ${code}`)
        }
      }
    }
  }
  return wrong
}

describe.each([
  ['web', webApiDocument],
  ['backend', backendApiDocument],
] as const)('the %s OpenAPI document', (_name, build) => {
  const doc = build() as Doc

  it('documents error responses', () => {
    const statuses = Object.values(doc.paths ?? {}).flatMap((ops) => Object.values(ops).flatMap((op) => Object.keys(op.responses ?? {})))
    expect(statuses.filter((s) => /^[45]/.test(s)).length).toBeGreaterThan(0)
  })

  it('requires `code` in the schema of every documented 4xx and 5xx response', () => {
    expect(errorsWithoutCode(doc)).toEqual([])
  })

  it('documents each error code under the one status the catalogue gives it', () => {
    expect(codesUnderAnotherStatus(doc)).toEqual([])
  })
})

describe('the check itself', () => {
  const doc = (schema: Schema): Doc => ({
    paths: { '/x': { get: { responses: { 400: { content: { 'application/json': { schema } } }, 200: {} } } } },
    components: { schemas: { E: { required: ['error', 'code'] }, NoCode: { required: ['error'] } } },
  })

  it('follows $ref and allOf to the required list', () => {
    expect(errorsWithoutCode(doc({ $ref: '#/components/schemas/E' }))).toEqual([])
    expect(errorsWithoutCode(doc({ allOf: [{ $ref: '#/components/schemas/E' }, { required: ['issues'] }] }))).toEqual([])
  })

  it('reports an error response without `code`, or without a JSON schema at all', () => {
    expect(errorsWithoutCode(doc({ $ref: '#/components/schemas/NoCode' }))).toEqual(['get /x 400'])
    expect(errorsWithoutCode({ paths: { '/y': { post: { responses: { 503: {} } } } } })).toEqual(['post /y 503'])
  })
})
