import { createRouter } from '../../lib/app'
import * as create from './routes/create'
import * as download from './routes/download'
import * as install from './routes/install'
import * as list from './routes/list'
import * as rating from './routes/rating'
import * as uninstall from './routes/uninstall'
import * as verify from './routes/verify'

/** The skills marketplace (spec 2 "Skills"): catalog, create, safety scan, install and uninstall, download, rating. */
export const app = createRouter()
  .openapi(list.route, list.handler)
  .openapi(create.route, create.handler)
  .openapi(verify.route, verify.handler)
  .openapi(install.route, install.handler)
  .openapi(uninstall.route, uninstall.handler)
  .openapi(download.route, download.handler)
  .openapi(rating.route, rating.handler)
