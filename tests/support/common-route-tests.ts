import { describe, expect, it } from 'vitest'
import { generateApiKey } from '../../lib/auth/api-keys'
import { SESSION_COOKIE } from '../../lib/auth/session'
import { ERRORS, type ErrorCode } from '../../lib/http/errors'
import { insertApiKey } from '../auth/helpers'
import type { Harness, SeededUser } from './harness'
import { operations, type Operation } from './openapi'
import { backendCall, call, freshIp } from './requests'

/**
 * Checks every documented operation gets from its OpenAPI `security`, after Unkey's `runCommonRouteTests`: a
 * route that requires credentials refuses a caller without them, and one with forged ones, as its document says;
 * and a route whose path names a resource of the caller's answers another user's session as it documents
 * (404 or 403, "the same answer either way"), changing nothing. Nothing here knows a family: an operation added
 * later is checked because it is documented; one with an owned path id needs an entry in `owned` to be checked.
 */

type Document = Parameters<typeof operations>[0]
export type Api = 'web' | 'backend'

/** `METHOD /path` as documented: `GET /api/keys/{id}`. */
export const operationName = (op: Operation) => `${op.method} ${op.path}`

/** Anyone may call an operation whose requirements include `{}`; every other one refuses a caller without credentials. */
export const requiresCredentials = (op: Operation) => op.requirements.length > 0 && op.requirements.every((r) => r.length > 0)

/** A WebSocket upgrade (documented `101`): checked as a plain request, which is refused the same way before any upgrade. */
export const isUpgrade = (op: Operation) => '101' in op.responses

/**
 * The catalogue codes a documented answer names in its description, by code (`` `UNAUTHORIZED` ``) or by the
 * catalogue's text for it (`` `Invalid API key` ``), among those that answer with its status.
 */
export function documentedCodes(op: Operation, status: number): ErrorCode[] {
  const quoted = [...(op.responses[status]?.description ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1])
  return (Object.keys(ERRORS) as ErrorCode[]).filter(
    (code) => ERRORS[code][0] === status && (quoted.includes(code) || quoted.includes(ERRORS[code][1])),
  )
}

export interface Refusal {
  status: number
  /** The codes the document names for it; empty when it names none (then any catalogue code of the status). */
  codes: ErrorCode[]
}

/** How the operation documents refusing a caller without credentials: its 401, else the 4xx it says is for "no session". */
export function documentedRefusal(op: Operation): Refusal | undefined {
  if (op.responses['401']) return { status: 401, codes: documentedCodes(op, 401) }
  const noSession = Object.entries(op.responses).find(([status, r]) => /^4\d\d$/.test(status) && /\bno session\b/i.test(r.description ?? ''))
  return noSession && { status: Number(noSession[0]), codes: documentedCodes(op, Number(noSession[0])) }
}

/** What a forged credential may get: any refusal the operation documents (401, or 403 where it has one). */
export const documentedRejections = (op: Operation): Refusal[] =>
  ['401', '403'].filter((s) => s in op.responses).map((s) => ({ status: Number(s), codes: documentedCodes(op, Number(s)) }))

/**
 * The answer an operation documents for a resource that is not the caller's: the 404 (else 403) whose description
 * speaks of the caller ("no such agent, or not the caller's", "`userId` is not the caller").
 */
export function documentedForeignAnswer(op: Operation): Refusal | undefined {
  for (const status of [404, 403]) {
    if (/\bcaller\b|\bcaller[’']s\b/i.test(op.responses[status]?.description ?? '')) return { status, codes: documentedCodes(op, status) }
  }
  return undefined
}

/** Operations with a path id whose session callers get a documented answer for another user's resource. */
export const ownedResourceOperations = (doc: Document) =>
  operations(doc).filter((op) => op.security.includes('session') && op.params.some((p) => p.in === 'path') && documentedForeignAnswer(op))

/** Forged credentials of each scheme: well-formed, and unknown to the platform. */
export const FORGED: Record<string, () => Record<string, string>> = {
  session: () => ({ cookie: `${SESSION_COOKIE}=${crypto.randomUUID().replaceAll('-', '')}${crypto.randomUUID().replaceAll('-', '')}` }),
  apiKey: () => ({ authorization: `Bearer ${generateApiKey()}` }),
  sharedKey: () => ({ authorization: 'Bearer not-the-internal-api-key-0123456789' }),
  identityHeaders: () => ({
    'x-user-id': crypto.randomUUID(),
    'x-user-email': 'mallory@example.com',
    'x-user-role': 'admin',
    'x-identity-timestamp': String(Math.floor(Date.now() / 1000)),
    'x-user-signature': 'f'.repeat(64),
  }),
  queueSignature: () => ({ 'upstash-signature': 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmb3JnZWQifQ.c2lnbmF0dXJl' }),
  djAccessToken: () => ({ authorization: 'Bearer forged.dj-access-token' }),
}

/** `op.path` with each path parameter from `values`, else a fresh UUID (an id nobody has). */
export const pathOf = (op: Operation, values: Record<string, string> = {}) =>
  op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? crypto.randomUUID()))

export interface SendOptions {
  path?: string
  user?: SeededUser
  headers?: Record<string, string>
  body?: unknown
}

/**
 * A request to `op` as its client sends it, from a fresh client address (so only the rate-limit tests share a
 * limiter): the dashboard's (`call`) on the web API, a script's (`backendCall`) on the backend. A JSON body when the
 * operation takes one (`{}` unless given).
 */
export function send(h: Harness, api: Api, op: Operation, opts: SendOptions = {}) {
  const path = opts.path ?? pathOf(op)
  const body = opts.body ?? (op.bodyTypes.length ? {} : undefined)
  const headers = { 'cf-connecting-ip': freshIp(), ...opts.headers }
  if (api === 'web') return call(h, op.method, path, { user: opts.user, body, headers })
  const cookie: Record<string, string> = opts.user ? { cookie: opts.user.cookie } : {}
  return backendCall(h.backend, op.method, path, { headers: { ...cookie, ...headers }, body })
}

/** Reads an error answer and holds it to `refusal`: its status, and `{error, code}` with a code it documents. */
export async function expectRefusal(res: Response, refusals: Refusal[], what: string) {
  const text = await res.text()
  const statuses = refusals.map((r) => r.status)
  expect(statuses, `${what}: ${res.status} ${text.slice(0, 200)}`).toContain(res.status)
  const body = JSON.parse(text) as { error: unknown; code: ErrorCode }
  expect(body, what).toEqual({ error: expect.any(String), code: expect.any(String) })
  const refusal = refusals.find((r) => r.status === res.status)!
  expect(ERRORS[body.code]?.[0], `${what}: ${body.code} is a ${res.status} in the catalogue`).toBe(res.status)
  if (refusal.codes.length) expect(refusal.codes, `${what}: ${body.code} documented`).toContain(body.code)
  return body
}

/** A user's resource that an operation's path names, made fresh for one check. */
export interface OwnedResource {
  /** The path parameters naming it. */
  params: Record<string, string>
  /** Its stored state, compared before and after the other user's attempt. */
  state(): Promise<unknown>
}

export interface OwnedResourceKind {
  /** The paths (`/api/agents/{id}/...`) whose parameters name this kind of resource. */
  paths: RegExp
  /** A fresh one of `owner`'s. */
  create(h: Harness, owner: SeededUser): Promise<OwnedResource>
  /** A request by which the owner reaches it (once per kind: the id is a real one of theirs). */
  reach?: { method: string; path: string; status: number }
}

export interface CommonRouteOptions {
  /** The documents to check, and which app serves each. */
  documents: Partial<Record<Api, Document>>
  /** The kinds of owned resources the paths name (checked: every owned-resource operation has one). */
  owned: OwnedResourceKind[]
  /** Request bodies by operation (`PUT /api/agents/{id}`), for operations that validate one before looking the resource up. */
  bodies?: Record<string, (ctx: { h: Harness; caller: SeededUser }) => unknown | Promise<unknown>>
  /**
   * Operations that require credentials but document no refusal, with why: held to be exactly these, so a new one
   * (or a fixed one) shows.
   */
  undocumentedRefusals?: Record<string, string>
}

/**
 * Registers, per document: for every operation that requires credentials, "no credentials → the documented refusal"
 * and, per scheme it accepts, "forged credentials → refused"; for every operation whose path names the caller's
 * resource, "another user's session → the documented 403/404, the same as for an id nobody has, and nothing changed".
 */
export function runCommonRouteTests(h: Harness, opts: CommonRouteOptions) {
  const kindOf = (op: Operation) => opts.owned.find((k) => k.paths.test(op.path))
  /** A fresh owner's resource for `op`'s path when it names one (else none: the path gets ids nobody has). */
  async function target(op: Operation) {
    const kind = kindOf(op)
    const owner = await h.seedUser('Owner', `owner-${crypto.randomUUID()}@example.com`)
    const resource = kind && (await kind.create(h, owner))
    return { owner, resource, path: pathOf(op, resource?.params) }
  }

  for (const [api, doc] of Object.entries(opts.documents) as Array<[Api, Document]>) {
    const credentialed = operations(doc).filter(requiresCredentials)
    const undocumented = credentialed.filter((op) => !documentedRefusal(op)).map(operationName)

    describe(`${api} API: operations that require credentials refuse callers without them`, () => {
      it('every one documents its refusal (401, or the answer it gives without a session)', () => {
        const known = Object.keys(opts.undocumentedRefusals ?? {}).filter((name) => name.startsWith(`${api} `)).map((name) => name.slice(api.length + 1))
        expect(undocumented.sort()).toEqual(known.sort())
      })

      for (const op of credentialed) {
        const refusal = documentedRefusal(op)
        if (!refusal) continue
        const name = `${operationName(op)}${isUpgrade(op) ? ' (WebSocket, without the upgrade)' : ''}`
        const requirements = op.requirements.map((r) => r.join('+')).join(' | ')
        it(`${name} [${requirements}]: no credentials → ${refusal.status}; forged ones refused; nothing changes`, async () => {
          // Aimed at a real resource when the path names one, with a body that would pass: only the credentials are missing.
          const { owner, resource, path } = await target(op)
          const body = await opts.bodies?.[operationName(op)]?.({ h, caller: owner })
          const before = await resource?.state()

          const bare = await expectRefusal(await send(h, api, op, { path, body }), [refusal], `${name} without credentials`)
          // A session route answers exactly the catalogue's text for its code.
          if (op.security.includes('session') && refusal.codes.length === 1) expect(bare.error).toBe(ERRORS[bare.code][1])
          for (const scheme of op.security) {
            const forged = FORGED[scheme]
            if (!forged) continue // `payment` pays for one call: never a requirement on its own here
            await expectRefusal(await send(h, api, op, { path, body, headers: forged() }), documentedRejections(op), `${name} with a forged ${scheme}`)
          }
          if (resource) expect(await resource.state(), 'the resource is unchanged').toEqual(before)
        })
      }
    })

    const foreign = ownedResourceOperations(doc)
    if (!foreign.length) continue
    describe(`${api} API: another user's resource, named in the path`, () => {
      it('every operation with an owned path id has a resource kind to check it with', () => {
        expect(foreign.filter((op) => !kindOf(op)).map(operationName)).toEqual([])
      })

      for (const kind of opts.owned) {
        if (!kind.reach) continue
        const reach = kind.reach
        it(`the owner reaches their own: ${reach.method} ${reach.path} → ${reach.status}`, async () => {
          const op = operations(doc).find((o) => o.method === reach.method && o.path === reach.path)!
          const { owner, path } = await target(op)
          const res = await send(h, api, op, { user: owner, path })
          expect(res.status, await res.clone().text()).toBe(reach.status)
        })
      }

      for (const op of foreign) {
        const answer = documentedForeignAnswer(op)!
        const how = op.security.includes('apiKey') ? "another user's session or API key" : "another user's session"
        it(`${operationName(op)}: ${how} → ${answer.status}, as for an id nobody has; nothing changes`, async () => {
          expect(kindOf(op), `a resource kind for ${op.path}`).toBeDefined()
          const { resource, path } = await target(op)
          const other = await h.seedUser('Other', `other-${crypto.randomUUID()}@example.com`)
          const body = await opts.bodies?.[operationName(op)]?.({ h, caller: other })
          const before = await resource!.state()
          expect(before, 'the resource exists').toBeTruthy()

          const callers: Array<[string, SendOptions]> = [['session', { user: other }]]
          if (op.security.includes('apiKey')) callers.push(['API key', { headers: { authorization: `Bearer ${(await insertApiKey(h.db, other.id)).key}` } }])
          for (const [credential, as] of callers) {
            const what = `${operationName(op)} with another user's ${credential}`
            const res = await send(h, api, op, { ...as, path, body })
            const refused = await expectRefusal(res, [answer], what)
            const unknown = await send(h, api, op, { ...as, body })
            expect(unknown.status, `${what}: an id nobody has`).toBe(res.status)
            expect(await unknown.json(), `${what}: the same answer either way`).toEqual(refused)
            expect(await resource!.state(), `${what}: the owner’s resource is unchanged`).toEqual(before)
          }
        })
      }
    })
  }
}
