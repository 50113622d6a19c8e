import { createRouter } from '../../lib/app'
import * as del from './routes/delete'
import * as get from './routes/get'
import * as purge from './routes/purge'
import * as upload from './routes/upload'

/**
 * The caller's files for their agents: list, download, upload (streamed, under the plan's quota), delete (spec 2
 * "Files"); and the queued job that finishes the deletes of a deleted agent's files.
 */
export const app = createRouter()
  .openapi(get.route, get.handler)
  .openapi(upload.route, upload.handler)
  .openapi(del.route, del.handler)
  .openapi(purge.route, purge.handler)
