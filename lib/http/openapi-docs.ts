import { Scalar } from '@scalar/hono-api-reference'
import type { Router } from '../app'
import { IDENTITY_SCHEME_DESCRIPTION } from '../auth/identity'
import { errorCodes } from './error-catalogue'
import { ERRORS, type ErrorCode } from './errors'

const securitySchemes = {
  session: { type: 'apiKey', in: 'cookie', name: 'service-session', description: 'Database-backed session cookie' },
  sharedKey: { type: 'http', scheme: 'bearer', description: '`INTERNAL_API_KEY`, compared in constant time' },
  apiKey: { type: 'http', scheme: 'bearer', description: 'A user API key (`sk_...`)' },
  identityHeaders: { type: 'apiKey', in: 'header', name: 'x-user-signature', description: IDENTITY_SCHEME_DESCRIPTION },
  queueSignature: { type: 'apiKey', in: 'header', name: 'Upstash-Signature', description: 'QStash signature of the body for this URL (queue and cron receivers)' },
  djAccessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A DJ access token: `session.accessToken` of `POST /api/radio/streams` (an HS256 JWT under `SESSION_SECRET`, per RFC8725: the algorithm fixed, its audience `radio-dj-access` required, so no other token of the service passes as one; names one session and its wallet, valid until it expires)' },
  payment: { type: 'http', scheme: 'Payment', description: 'An MPP credential (the "Payment" HTTP authentication scheme) answering the gateway’s 402 challenge' },
} as const

// The document is built once for every deployment: it names the origin that serves it, whichever that is.
const servers = [{ url: '/', description: 'The deployment serving this document (production, staging or local)', 'x-internal': false }]

/** What the platform's error handler answers for any route (lib/http/errors.ts `onError`). */
const internalError = { description: 'Internal server error (`INTERNAL`)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }

type Operation = { responses?: Record<string, unknown>; security?: Record<string, string[]>[] }

export type OpenApiDocument = ReturnType<Router['getOpenAPI31Document']>

/** The OpenAPI 3.1 document of every route in `documented` (the merged router whose registry holds them). */
export function openApiDocument(documented: Router, title: string, version = 'v0.0.0'): OpenApiDocument {
  const doc = documented.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title,
      version,
      description:
        'Errors are `{error, code}`: `code` is stable and comes from the catalogue below; `error` is for people. ' +
        'Unhandled ones are 500 `{error: "Internal server error", code: "INTERNAL"}`. Malformed JSON is ' +
        '400 `{error: "Invalid JSON body", code: "INVALID_JSON"}`; failed validation is 400 `{error, code: "VALIDATION", issues}`, and so is ' +
        'any string (body field, path or query parameter, header) holding a NUL or an unpaired surrogate. Input ' +
        'the database refuses is 400 `{error: "Invalid input", code: "INVALID_INPUT"}` (`Input too large` for an ' +
        'oversized index value); a duplicate or a write that conflicts with related records is 409 `{error, code: ' +
        '"CONFLICT"}`; neither echoes the query. A JSON ' +
        'route sent another Content-Type is 415 (`UNSUPPORTED_MEDIA_TYPE`); bodies over 1 MB are 413 `{error: "Payload too large", code: "PAYLOAD_TOO_LARGE"}`. ' +
        'Rate-limited answers are 429 with `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds) ' +
        'and `Retry-After` (`RATE_LIMITED`); every response that passed a limiter carries the three `RateLimit-*` headers. ' +
        'A known path asked with a method it does not take is 405 (`METHOD_NOT_ALLOWED`) with `Allow`; an unknown path ' +
        'is 404 (`NOT_FOUND`). A trailing slash names the same route (`/api/keys/` is `/api/keys`), with no redirect. ' +
        'On any route that uses them, a database or key-value store that does not answer is 503 `{error, code: ' +
        '"DATABASE_UNAVAILABLE"}` or `"KV_UNAVAILABLE"`, with `Retry-After`.\n\n' +
        '## Error codes\n\n' +
        'Each code has one HTTP status, given beside it.\n\n' +
        Object.entries(errorCodes)
          .map(([code, meaning]) => `- \`${code}\` (${ERRORS[code as ErrorCode][0]}): ${meaning}`)
          .join('\n'),
    },
  })
  const used = new Set<string>()
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(operations as Record<string, Operation>)) {
      if (!op.responses) continue
      op.responses[500] ??= internalError
      for (const requirement of op.security ?? []) for (const scheme of Object.keys(requirement)) used.add(scheme)
    }
  }
  // Only the schemes this document's operations use: each API lists its own.
  const schemes = Object.fromEntries(Object.entries(securitySchemes).filter(([name]) => used.has(name)))
  doc.components = { ...doc.components, securitySchemes: schemes as never }
  doc.servers = servers
  return doc
}

/**
 * Where a docs page loads Scalar's renderer (`@scalar/api-reference`'s standalone browser bundle, ~4.3 MB): next to
 * the page, on the same origin. `npm run build` copies it into the Worker's static assets; the local server serves
 * it from node_modules (infra/static-assets.ts). It never enters a Worker bundle.
 */
export const docsScriptPath = (pagePath: string) => `${pagePath}/scalar.js`

/** What a Worker with `[assets]` in wrangler.toml finds in `env.ASSETS`. */
type AssetsBinding = { fetch(request: Request): Promise<Response> }

/**
 * Serves `doc` (or the document `doc()` builds, once, on first request) with this deployment's version at
 * `docPath`, and a docs page at `pagePath` that renders with no network beyond this origin.
 */
export function serveDocument(router: Router, doc: OpenApiDocument | (() => OpenApiDocument), opts: { title: string; docPath: string; pagePath?: string }) {
  const { title, docPath, pagePath } = opts
  let built = typeof doc === 'function' ? undefined : doc
  const pageNote = pagePath
    ? `Browse this document at \`${pagePath}\`: the page loads nothing but this document and its renderer (\`${docsScriptPath(pagePath)}\`) from this origin, so it works offline.\n\n`
    : ''
  router.get(docPath, (c) => {
    built ??= (doc as () => OpenApiDocument)()
    const version = c.var.services.config.APP_VERSION ?? built.info.version
    return c.json({ ...built, info: { ...built.info, version, description: pageNote + (built.info.description ?? '') } })
  })
  if (pagePath) servePage(router, { title, docPath, pagePath })
  return router
}

/**
 * The renderer's settings that keep a docs page on its own origin: nothing it loads and no control on it reaches
 * another host (tests/docs/pages-offline.test.ts clicks through it with every other host blocked).
 * `cdn` (set per page) is the script's URL: ours, not jsDelivr.
 */
export const OFFLINE_PAGE = {
  withDefaultFonts: false, // no web fonts from fonts.scalar.com
  telemetry: false,
  agent: { disabled: true }, // "Ask AI": Scalar's hosted agent chat
  mcp: { disabled: true }, // "Generate MCP": VS Code / Cursor install links for an MCP server Scalar hosts
  showDeveloperTools: 'never', // the toolbar shown on localhost: Configure, Share and Deploy to Scalar's dashboard
  hideClientButton: true, // "Open API Client": the full client, with its links to Scalar's apps
  // Scalar's services, should any control still name one: this origin instead (the proxy stays unset: try-it
  // requests go straight to the documented server, which is this origin).
  externalUrls: { dashboardUrl: '/', registryUrl: '/', proxyUrl: '/', apiBaseUrl: '/' },
  // Links that leave the page: the sidebar's "Powered by Scalar" (scalar.com), and the try-it's status code (MDN).
  customCss: '.darklight-reference-promo, a[href*="www.scalar.com"], a[href*="developer.mozilla.org"] { display: none !important; }',
} as const

function servePage(router: Router, { title, docPath, pagePath }: { title: string; docPath: string; pagePath: string }) {
  const script = docsScriptPath(pagePath)
  router.get(pagePath, Scalar({ url: docPath, pageTitle: title, cdn: script, ...OFFLINE_PAGE } as Parameters<typeof Scalar>[0]))
  // On Workers the asset is served before the Worker runs; a request that still reaches it is passed to the binding.
  // Without a binding (the local Node server) the next handler registered for this path answers, else 404.
  router.get(script, (c, next) => {
    const assets = c.env?.ASSETS as AssetsBinding | undefined
    return assets ? assets.fetch(c.req.raw) : next()
  })
}
