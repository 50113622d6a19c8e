import type { TestProject } from 'vitest/node'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openPglite } from '../../infra/database'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A dump of a freshly migrated PGlite database, for `openTestStores` to start from (see stores.ts). */
    pgliteTemplate: string
  }
}

/**
 * Once per run: migrates one PGlite database and dumps it. Creating and migrating a database takes seconds
 * (initdb, then every migration); loading the dump takes about a third of that, and every test file opens one.
 */
export default async function setup(project: TestProject) {
  const database = await openPglite()
  try {
    const dump = await database.client.dumpDataDir('none')
    const dir = join(tmpdir(), `platform-tests-${process.pid}`)
    mkdirSync(dir, { recursive: true })
    const file = join(dir, 'pglite-template.tar')
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()))
    project.provide('pgliteTemplate', file)
    return () => rmSync(dir, { recursive: true, force: true })
  } finally {
    await database.close()
  }
}
