import { Scalar } from '@scalar/hono-api-reference'
import type { Router } from '../app'

const securitySchemes = {
  session: { type: 'apiKey', in: 'cookie', name: 'service-session', description: 'Database-backed session cookie' },
  sharedKey: { type: 'http', scheme: 'bearer', description: '`INTERNAL_API_KEY`, compared in constant time' },
  apiKey: { type: 'http', scheme: 'bearer', description: 'A user API key (`sk_...`)' },
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
        description: 'Errors are `{error, code?}`. Rate-limited answers carry `RateLimit-*` and `Retry-After` headers.',
      },
    })
    doc.components = { ...doc.components, securitySchemes: securitySchemes as never }
    return c.json(doc)
  })
  if (opts.pagePath) router.get(opts.pagePath, Scalar({ url: opts.docPath, pageTitle: opts.title }))
  return router
}
