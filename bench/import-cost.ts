// What each heavy import costs a Worker, imported the way the functions import it: gzipped bytes and cold start
// in workerd over a trivial Worker (median of several runs). Reading it: the shared floor of every function is
// hono + zod + @hono/zod-openapi + the stores' drivers; viem, SimpleWebAuthn and the S3 client are paid only where used.
import { bundleFunction } from '../infra/bundle'
import { coldStartOverTrivial } from './cold-start'

const imports: Array<{ name: string; source: string }> = [
  { name: 'hono', source: `import { Hono } from 'hono'; export default new Hono().get('/', (c) => c.text('ok'))` },
  { name: 'zod (classic)', source: `import { z } from 'zod'; const s = z.object({ a: z.string() }); export default { fetch: () => new Response(JSON.stringify(s.safeParse({ a: 'x' }).success)) }` },
  { name: '@hono/zod-openapi', source: `import { OpenAPIHono, z } from '@hono/zod-openapi'; export default new OpenAPIHono().get('/', (c) => c.text(String(!!z)))` },
  { name: 'drizzle-orm + @neondatabase/serverless', source: `import { Pool, neon } from '@neondatabase/serverless'; import { drizzle } from 'drizzle-orm/neon-serverless'; export default { fetch: () => new Response(String(typeof drizzle + typeof Pool + typeof neon)) }` },
  { name: 'the Upstash kv adapter (lib/kv)', source: `import { UpstashKv } from './lib/kv/upstash'; export default { fetch: () => new Response(typeof new UpstashKv('http://kv.test', 't')) }` },
  { name: 'viem (as lib/chain imports it)', source: `import { createClient, http, getAddress } from 'viem'; import { verifyMessage, readContract } from 'viem/actions'; import { base } from 'viem/chains'; export default { fetch: () => new Response(String(typeof createClient + typeof http + typeof verifyMessage + typeof readContract + base.id + typeof getAddress)) }` },
  { name: '@simplewebauthn/server', source: `import { verifyRegistrationResponse, verifyAuthenticationResponse } from '@simplewebauthn/server'; export default { fetch: () => new Response(String(typeof verifyRegistrationResponse + typeof verifyAuthenticationResponse)) }` },
  { name: 'tool-call classifier (unbash)', source: `import { classifyToolCall } from './functions/permissions/hooks/classify'; export default { fetch: () => Response.json(classifyToolCall('bash', { command: 'ls' })) }` },
  { name: '@aws-sdk/client-s3 (the files adapter)', source: `import { S3Storage } from './functions/files/storage/s3'; export default { fetch: () => new Response(typeof new S3Storage({ bucket: 'b', region: 'auto', endpoint: 'http://s3.test' })) }` },
  { name: 'jose', source: `import { jwtVerify, createRemoteJWKSet } from 'jose'; export default { fetch: () => new Response(String(typeof jwtVerify + typeof createRemoteJWKSet)) }` },
]

export async function importCosts() {
  console.log('import cost in a Worker (minified + gzipped; cold start over a trivial Worker):')
  for (const { name, source } of imports) {
    const { code, gzipBytes } = await bundleFunction({ contents: source }, { minify: true })
    const ms = await coldStartOverTrivial(code)
    console.log(`  ${name.padEnd(40)} ${(gzipBytes / 1024).toFixed(1).padStart(6)} KB gz ${ms.toFixed(0).padStart(5)} ms`)
  }
}
