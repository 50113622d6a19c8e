// `npm run gen:env`: writes .env.example from the README's configuration table, the one list of settings.
import { readFileSync, writeFileSync } from 'node:fs'

export interface Setting {
  names: string[]
  default: string
  meaning: string
}

const plain = (cell: string) => cell.replace(/`/g, '').replace(/\\\|/g, '|').replace(/\[([^\]]+)\]\([^)]*\)/g, '$1').trim()

/** The rows of the table under `## Configuration`: each row's variables (backquoted upper-case names), default and meaning. */
export function configurationTable(readme: string): Setting[] {
  const start = readme.indexOf('\n## Configuration\n')
  const end = readme.indexOf('\n## ', start + 1)
  if (start < 0) throw new Error('README: no "## Configuration" section')
  return readme
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((row) => {
      const cells = row.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim())
      const names = [...cells[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])
      return { names, default: plain(cells[1] ?? ''), meaning: plain(cells[2] ?? '') }
    })
}

/** The first sentence of a README cell, as one comment line. */
const firstSentence = (text: string) => {
  const m = text.match(/^(.*?[.)])(\s|$)/)
  return (m ? m[1] : text).replace(/\s+/g, ' ')
}

export function envExample(readme: string): string {
  const out = [
    '# Every setting the platform reads, from the README\'s "Configuration" table (npm run gen:env writes this file).',
    '# Copy to .env and uncomment what you set: `npm start` reads .env when present; the environment wins over it.',
    '# Locally every one is optional: unset, each store is the embedded one and secrets are generated under DATA_DIR.',
    '',
  ]
  for (const s of configurationTable(readme)) {
    out.push(`# ${firstSentence(s.meaning)}`, `# Default: ${s.default}`)
    for (const name of s.names) out.push(`# ${name}=`)
    out.push('')
  }
  return out.join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('..', import.meta.url)
  writeFileSync(new URL('.env.example', root), envExample(readFileSync(new URL('README.md', root), 'utf8')))
}
