import { bundleFunction, functionEntries } from './infra/bundle'
const only = process.argv.slice(2)
for (const { family, entry } of functionEntries()) {
  if (only.length && !only.includes(family)) continue
  const { gzipBytes } = await bundleFunction(entry, { minify: true })
  console.log(family.padEnd(14), (gzipBytes / 1024).toFixed(1), 'KB')
}
