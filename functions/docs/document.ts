import { createRouter } from '../../lib/app'
import { openApiDocument } from '../../lib/http/openapi-docs'
import { webFamilies } from '../web'
import { WEB_API_TITLE } from './app'

/** The web API's document, from every web family's routes: `npm run gen:openapi` writes it for the docs Worker. */
export function webApiDocument() {
  const documented = createRouter()
  for (const family of Object.values(webFamilies)) documented.route('/', family)
  return openApiDocument(documented, WEB_API_TITLE)
}
