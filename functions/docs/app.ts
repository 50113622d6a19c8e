import { createRouter } from '../../lib/app'
import { type OpenApiDocument, serveDocument } from '../../lib/http/openapi-docs'
import generated from './openapi.generated.json'

export const WEB_API_TITLE = 'Platform web API'

/**
 * `/api/openapi.json` and `/api/docs` for the whole web API. The document is generated at build time
 * (`npm run gen:openapi`, checked by tests/docs/openapi-generated.test.ts), so this function bundles no family;
 * the page's renderer, `/api/docs/scalar.js`, is this Worker's static asset (wrangler.toml), not in its bundle.
 */
export const app = serveDocument(createRouter(), generated as unknown as OpenApiDocument, {
  title: WEB_API_TITLE,
  docPath: '/api/openapi.json',
  pagePath: '/api/docs',
})
