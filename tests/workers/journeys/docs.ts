import { describe, expect, it } from 'vitest'
import type { WorkerdPlatform } from '../../support/workerd-platform'

/** docs: the web OpenAPI document and its page; the backend's own document and page. */
export function docsJourney(p: WorkerdPlatform) {
  describe('docs', () => {
    it('serves the OpenAPI 3.1 documents and the pages that load them', async () => {
      const doc = (await (await p.fetch('/api/openapi.json')).json()) as { openapi: string; paths: Record<string, unknown> }
      expect(doc.openapi).toBe('3.1.0')
      expect(doc.paths['/api/health']).toBeDefined()
      const page = await p.fetch('/api/docs')
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('/api/openapi.json')
      // again, from the same isolate
      expect((await p.fetch('/api/openapi.json')).status).toBe(200)
      const backendDoc = (await (await p.fetch('/openapi.json', { origin: 'backend' })).json()) as { paths: Record<string, unknown> }
      expect(backendDoc.paths['/health']).toBeDefined()
      expect(backendDoc.paths['/api/health']).toBeUndefined()
    })
  })
}
