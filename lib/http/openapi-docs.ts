import { Scalar } from '@scalar/hono-api-reference'
import type { Router } from '../app'
import { IDENTITY_SCHEME_DESCRIPTION } from '../auth/identity'

const securitySchemes = {
  session: { type: 'apiKey', in: 'cookie', name: 'service-session', description: 'Database-backed session cookie' },
  sharedKey: { type: 'http', scheme: 'bearer', description: '`INTERNAL_API_KEY`, compared in constant time' },
  apiKey: { type: 'http', scheme: 'bearer', description: 'A user API key (`sk_...`)' },
  identityHeaders: { type: 'apiKey', in: 'header', name: 'x-user-signature', description: IDENTITY_SCHEME_DESCRIPTION },
} as const

/**
 * Serves the OpenAPI 3.1 document of every route in `documented` at `docPath`, and a docs page at
 * `pagePath`. `documented` is the merged router whose registry holds all the routes to describe.
 */
export function serveOpenApi(router: Router, documented: Router, opts: { title: string; docPath: string; pagePath?: string }) {
  router.get(opts.docPath, (c) => {
    const doc = documented.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: opts.title,
        version: c.var.services.config.APP_VERSION ?? 'v0.0.0',
        description:
          'Errors are `{error, code?}`; unhandled ones are 500 `{error: "Internal server error"}`. Malformed JSON is ' +
          '400 `{error: "Invalid JSON body"}`; failed validation is 400 `{error, code: "VALIDATION", issues}`, and so is ' +
          'any string (body field, path or query parameter, header) holding a NUL or an unpaired surrogate. Input ' +
          'the database refuses is 400 `{error: "Invalid input", code: "INVALID_INPUT"}` (`Input too large` for an ' +
          'oversized index value); a duplicate or a write that conflicts with related records is 409 `{error, code: ' +
          '"CONFLICT"}`; neither echoes the query. A JSON ' +
          'route sent another Content-Type is 415; bodies over 1 MB are 413 `{error: "Payload too large"}`. ' +
          'Rate-limited answers are 429 with `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds) ' +
          'and `Retry-After`; every response that passed a limiter carries the three `RateLimit-*` headers.',
      },
    })
    doc.components = { ...doc.components, securitySchemes: securitySchemes as never }
    return c.json(doc)
  })
  if (opts.pagePath) router.get(opts.pagePath, Scalar({ url: opts.docPath, pageTitle: opts.title }))
  return router
}
