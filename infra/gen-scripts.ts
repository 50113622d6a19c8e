// `npm run gen:scripts`: Workers cannot read files at run time, so the setup scripts the backend serves
// (GET /install, GET /link) are compiled into a module. `--check` only verifies that it is up to date.
import { readFileSync, writeFileSync } from 'node:fs'

const root = new URL('../', import.meta.url)
export const GENERATED_PATH = new URL('functions/backend/scripts.generated.ts', root)

/** Exported constant -> source file under infra/scripts. */
export const SCRIPTS = {
  INSTALL_HOME_SH: 'infra/scripts/install-home.sh',
  INSTALL_LINK_SH: 'infra/scripts/install-link.sh',
} as const

export const readScript = (path: string) => readFileSync(new URL(path, root), 'utf8')

/** The module's text: JSON string literals, so every byte of each script round-trips. */
export function renderScriptsModule() {
  const lines = ['// generated from infra/scripts by npm run gen:scripts; do not edit', '']
  for (const [name, path] of Object.entries(SCRIPTS)) {
    lines.push(`/** ${path} */`, `export const ${name} = ${JSON.stringify(readScript(path))}`, '')
  }
  return lines.join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = renderScriptsModule()
  if (process.argv.includes('--check')) {
    const current = readFileSync(GENERATED_PATH, 'utf8')
    if (current !== text) {
      console.error('functions/backend/scripts.generated.ts is out of date: run npm run gen:scripts')
      process.exit(1)
    }
    console.log('functions/backend/scripts.generated.ts is up to date')
  } else {
    writeFileSync(GENERATED_PATH, text)
    console.log(`wrote functions/backend/scripts.generated.ts (${Object.keys(SCRIPTS).join(', ')})`)
  }
}
