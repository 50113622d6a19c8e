import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { GENERATED_OPENAPI, renderOpenApi } from '../../infra/gen-openapi'

describe('the docs function\'s generated OpenAPI document', () => {
  it('matches the routes (run `npm run gen:openapi` after changing a route)', () => {
    expect(readFileSync(GENERATED_OPENAPI, 'utf8')).toBe(renderOpenApi())
  })
})
