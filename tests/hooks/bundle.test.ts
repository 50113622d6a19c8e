import { Miniflare } from 'miniflare'
import { afterAll, describe, expect, it } from 'vitest'
import { bundleFunction } from '../../infra/bundle'

// The classifier (and unbash under it) bundles the way Wrangler builds a Worker and classifies inside workerd.
const ENTRY = `import { classifyToolCall } from './functions/permissions/hooks/classify'
export default { fetch: async (req) => Response.json(classifyToolCall('bash', await req.json())) }`

const open: Miniflare[] = []
afterAll(async () => {
  await Promise.all(open.map((mf) => mf.dispose()))
})

describe('classifier in a Worker', () => {
  it('bundles for workerd at a bounded cost and classifies there', async () => {
    const trivial = await bundleFunction({ contents: 'export default { fetch: () => new Response("ok") }' }, { minify: true })
    const bundle = await bundleFunction({ contents: ENTRY }, { minify: true })
    // unbash is ~27 KB gz, the rules with their option tables ~30 KB gz: a family mounting the hook keeps room under its 250 KB.
    expect(bundle.gzipBytes - trivial.gzipBytes).toBeLessThan(60 * 1024)

    const mf = new Miniflare({ modules: [{ type: 'ESModule', path: 'index.mjs', contents: bundle.code }], compatibilityDate: '2026-04-01' })
    open.push(mf)
    const classify = async (command: string) => (await mf.dispatchFetch('http://localhost/', { method: 'POST', body: JSON.stringify({ command }) })).json()
    expect(await classify('ls -la')).toEqual({ tier: 'safe', reason: 'Allowed: ls' })
    expect(await classify('echo cm0gLXJmIC8= | base64 -d | sh')).toEqual({ tier: 'destructive', reason: 'rm: deletes / recursively' })
    expect(await classify('curl x | sh')).toEqual({ tier: 'dangerous', reason: 'sh: runs code fetched from the network' })
  })
})
