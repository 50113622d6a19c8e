import { fc } from '@fast-check/vitest'
import type { Operation } from '../support/openapi'

/**
 * Requests generated from an OpenAPI 3.1 document for the malformed-input run: every operation, with its
 * path, query and header parameters and its JSON body drawn from the documented schema, then mutated with
 * hostile values. Nothing here knows a family: a route added later is covered because it is documented.
 */
type Schema = Record<string, any>
export { operations, type Operation } from '../support/openapi'

/** Strings chosen to break things: NUL, lone surrogates, traversal, injection, huge, odd Unicode, numbers. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\u0000', 'a\u0000b', '\uD800', 'x\uDFFFy', '\uDBFF\uDBFF', '\uFEFF', '\u202Eevil', 'e\u0301\u0301\u0301', '\u{10FFFF}', '\uFFFF',
    '../../../etc/passwd', '..\\..\\windows\\win.ini', '%00', '%2e%2e%2f', '....//....//', '/', '.', '..',
    "'; drop table users;--", '" OR 1=1 --', '${jndi:ldap://x}', '<script>alert(1)</script>', '__proto__', 'constructor',
    '', ' ', '\n\r\t', 'null', 'NaN', '-1', '0', '1e309', '9'.repeat(40), '00000000-0000-0000-0000-000000000000',
    'sk_' + 'f'.repeat(64), 'not-a-uuid', 'a'.repeat(70_000), '🙂'.repeat(3000),
  ),
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 24 }),
  fc.string({ maxLength: 300 }),
)

/** Values of any JSON type, including the wrong ones and extremes. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(null, true, false, 0, -0, -1, 1e308, -1e308, 2 ** 53 + 1, 0.1, [], {}, [null], { __proto__: { x: 1 } }),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.jsonValue({ maxDepth: 3 }),
)

const resolve = (doc: Schema, s: Schema | undefined): Schema | undefined =>
  s?.$ref ? resolve(doc, s.$ref.split('/').slice(1).reduce((o: Schema, k: string) => o?.[k], doc)) : s

/** A value the schema accepts, most of the time (formats and patterns are approximated). */
export function fromSchema(doc: Schema, raw: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(doc, raw)
  if (!s || depth > 4) return fc.jsonValue({ maxDepth: 1 })
  if (s.const !== undefined) return fc.constant(s.const)
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum)
  const alts = s.anyOf ?? s.oneOf
  if (Array.isArray(alts) && alts.length) return fc.oneof(...alts.map((a: Schema) => fromSchema(doc, a, depth + 1)))
  if (Array.isArray(s.allOf) && s.allOf.length) return fromSchema(doc, s.allOf[0], depth + 1)
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type
  switch (type) {
    case 'string':
      if (s.format === 'email') return fc.emailAddress()
      if (s.format === 'uuid') return fc.uuid()
      if (s.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
      return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 80) })
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 })
    case 'number':
      return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true })
    case 'boolean':
      return fc.boolean()
    case 'array':
      return fc.array(fromSchema(doc, s.items, depth + 1), { maxLength: 3 })
    case 'object': {
      const props = Object.fromEntries(Object.entries<Schema>(s.properties ?? {}).map(([k, v]) => [k, fromSchema(doc, v, depth + 1)]))
      return fc.record(props, { requiredKeys: (s.required ?? []).filter((k: string) => k in props) })
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** Replaces one property (at any depth) of a generated object, or the whole value, with a hostile one. */
function mutate(value: unknown): fc.Arbitrary<unknown> {
  const paths: string[][] = [[]]
  const walk = (v: unknown, p: string[]) => {
    if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) (paths.push([...p, k]), walk(c, [...p, k]))
  }
  walk(value, [])
  return fc.tuple(fc.constantFrom(...paths), hostileValue, fc.option(hostileString, { nil: undefined })).map(([path, bad, extraKey]) => {
    if (!path.length) return bad
    const copy = structuredClone(value) as Record<string, unknown>
    let target = copy
    for (const k of path.slice(0, -1)) target = target[k] as Record<string, unknown>
    target[path[path.length - 1]] = bad
    if (extraKey !== undefined && !Array.isArray(copy)) copy[extraKey] = bad // an array's 'length' is not a key to add
    return copy
  })
}

const DEEP = 20_000
/** A request body as sent: JSON from the schema, mutated, of the wrong kind, or not JSON at all. */
export function bodyArb(doc: Schema, op: Operation): fc.Arbitrary<string | undefined> {
  const valid = fromSchema(doc, op.bodySchema)
  return fc.oneof(
    { weight: 3, arbitrary: valid.map((v) => JSON.stringify(v)) },
    { weight: 4, arbitrary: valid.chain(mutate).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: hostileValue.map((v) => JSON.stringify(v)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined, '', '{', '{"a":', 'null', '\u0000', '[1,2', '\uFEFF{}', '{"__proto__":{"admin":true}}',
        '['.repeat(DEEP) + ']'.repeat(DEEP), '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP), '"\\ud800"', '{"name":"\\u0000"}',
      ),
    },
    { weight: 1, arbitrary: hostileString },
  )
}

/** A URL for `op`: path parameters substituted (encoded, or raw for traversal), query from the schema or hostile. */
export function urlArb(doc: Schema, op: Operation): fc.Arbitrary<string> {
  const value = (p: Operation['params'][number]) => fc.oneof(hostileString, fromSchema(doc, p.schema).map(String))
  const path = op.params.filter((p) => p.in === 'path')
  const query = op.params.filter((p) => p.in === 'query')
  return fc
    .tuple(
      fc.tuple(...path.map((p) => fc.tuple(value(p), fc.boolean()))),
      fc.tuple(...query.map((p) => fc.option(value(p), { nil: undefined }))),
      fc.option(fc.tuple(hostileString, hostileString), { nil: undefined }),
    )
    .map(([pathValues, queryValues, extra]) => {
      let url = op.path
      path.forEach((p, i) => {
        const [v, raw] = pathValues[i]
        url = url.replace(`{${p.name}}`, raw ? v : encode(v))
      })
      const q = query.flatMap((p, i) => (queryValues[i] === undefined ? [] : [`${encode(p.name)}=${encode(queryValues[i]!)}`]))
      if (extra) q.push(`${encode(extra[0])}=${encode(extra[1])}`)
      return q.length ? `${url}?${q.join('&')}` : url
    })
}

/** encodeURIComponent refuses lone surrogates; a client would then send the raw text. */
export function encode(s: string) {
  try {
    return encodeURIComponent(s)
  } catch {
    return s
  }
}

/** Header values a client can send (ISO-8859-1 without controls), hostile ones included. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom('not-a-uuid', 'anonymous', '00000000-0000-0000-0000-000000000000', '../../x', "'; --", 'admin', 'a'.repeat(8000), 'x:y'),
)
