import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../context'

const JSON_TYPE = /^application\/([\w.-]+\+)?json/i

/**
 * For a route whose JSON body is optional. zod-openapi skips validation when there is no Content-Type
 * (the handler then sees `{}` without the schema's defaults), but with `Content-Type: application/json`
 * it parses the body, and an empty one would fail as malformed JSON. A blank JSON body is read as `{}`
 * here, so the schema (and its defaults) applies; anything else non-blank is still parsed strictly.
 */
export const blankJsonBodyIsEmptyObject = createMiddleware<AppEnv>(async (c, next) => {
  const type = c.req.header('content-type')
  if (type && JSON_TYPE.test(type) && (await c.req.text()).trim() === '') {
    // hono's json() parses the cached text, which it stores as a promise.
    c.req.bodyCache.text = Promise.resolve('{}') as unknown as string
  }
  await next()
})
