import { openApiDocument } from '../../lib/http/openapi-docs'
import { webRoutes } from '../web'
import { WEB_API_TITLE } from './app'

/** The web API's document, from every web family's routes: `npm run gen:openapi` writes it for the docs Worker. */
export const webApiDocument = () => openApiDocument(webRoutes, WEB_API_TITLE)
