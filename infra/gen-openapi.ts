// `npm run gen:openapi`: the web API's OpenAPI document, generated from the families' routes into the docs
// function, so that function serves it without bundling every family. `--check` only verifies it is current.
import { readFileSync, writeFileSync } from 'node:fs'
import { webApiDocument } from '../functions/docs/document'

export const GENERATED_OPENAPI = new URL('../functions/docs/openapi.generated.json', import.meta.url)

export const renderOpenApi = () => `${JSON.stringify(webApiDocument(), null, 1)}\n`

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = renderOpenApi()
  if (process.argv.includes('--check')) {
    if (readFileSync(GENERATED_OPENAPI, 'utf8') !== text) {
      console.error('functions/docs/openapi.generated.json is out of date: run npm run gen:openapi')
      process.exit(1)
    }
  } else writeFileSync(GENERATED_OPENAPI, text)
}
