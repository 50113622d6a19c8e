import { build } from 'esbuild'
import { workerBuildPlugins } from './infra/bundle'
const fam = process.argv[2]
const r = await build({ entryPoints: [`functions/${fam}/index.ts`], bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', conditions: ['workerd','worker','browser'], mainFields: ['browser','module','main'], minify: true, metafile: true, logLevel: 'silent', legalComments: 'none', plugins: workerBuildPlugins })
const pk: Record<string, number> = {}
for (const [f, o] of Object.entries(r.metafile.outputs)) for (const [inp, v] of Object.entries(o.inputs)) {
  const m = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(inp); const k = m ? m[1] : inp.split('/').slice(0,2).join('/')
  pk[k] = (pk[k] ?? 0) + v.bytesInOutput }
console.log(Object.entries(pk).sort((a,b)=>b[1]-a[1]).slice(0,30).map(([k,v])=>`${k} ${(v/1024).toFixed(1)}KB`).join('\n'))
