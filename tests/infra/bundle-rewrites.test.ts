import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundleFunction, withoutDocumentGenerators, workerRewrites } from '../../infra/bundle'

/**
 * infra/bundle.ts rewrites a few dependencies' internals by the specifier their files import (to leave out what the
 * Workers never run, or to swap a module workerd cannot run). Each names what it was checked against; an upgrade
 * that moves or renames those files would otherwise silently let the rewrite miss. So: the installed package is
 * the version checked, its importers still import what is rewritten, what is replaced still exists, and a bundle
 * of the libraries goes through every rewrite and leaves the replaced files out.
 */
const modules = join(__dirname, '../../node_modules')
const rewrites = [...workerRewrites, withoutDocumentGenerators]
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)["']([^"']+)["']/g

describe.each(rewrites.map((r) => [r.name, r] as const))('the bundler rewrite %s', (_, r) => {
  it(`was checked against the installed ${r.checked.pkg}`, () => {
    const { version } = JSON.parse(readFileSync(join(modules, r.checked.pkg, 'package.json'), 'utf8'))
    expect(version, `${r.checked.pkg} is now ${version}: check ${r.name} (infra/bundle.ts) against it, then its checked version`).toBe(r.checked.version)
  })

  it('its importers still import what it rewrites, and what it replaces still exists', () => {
    expect(r.checked.importers.length).toBeGreaterThan(0)
    for (const file of r.checked.importers) {
      const path = join(modules, file)
      expect(existsSync(path), `${file} is gone`).toBe(true)
      expect(`/node_modules/${file}`.includes(r.within), `${file} is outside ${r.within}`).toBe(true)
      const specifiers = [...readFileSync(path, 'utf8').matchAll(SPECIFIER)].map((m) => m[1])
      expect(specifiers.some((s) => r.specifier.test(s)), `${file} no longer imports anything ${r.specifier} matches`).toBe(true)
    }
    for (const file of r.checked.replaces) expect(existsSync(join(modules, file)), `${file} is gone`).toBe(true)
  })
})

describe('a Worker bundle of the rewritten libraries', () => {
  const PROBE = `
    import { z } from 'zod'
    import { OpenAPIHono } from '@hono/zod-openapi'
    import { verifyRegistrationResponse } from '@simplewebauthn/server'
    import { S3Client, GetObjectCommand } from '@aws-sdk/client-s3'
    export default { fetch: () => new Response([z.string(), OpenAPIHono, verifyRegistrationResponse, S3Client, GetObjectCommand].map((x) => typeof x).join()) }
  `

  it('goes through every rewrite and leaves out what each replaces', { timeout: 60_000 }, async () => {
    const { inputs } = await bundleFunction({ contents: PROBE })
    const bundled = (file: string) => inputs.some((i) => i.endsWith(`node_modules/${file}`))
    for (const r of rewrites) {
      expect(r.checked.importers.some(bundled), `${r.name}: none of its importers is bundled`).toBe(true)
      for (const file of r.checked.replaces) expect(bundled(file), `${r.name}: ${file} is bundled`).toBe(false)
      // A module replaced outright shows as its own input, `<name>:<specifier>`.
      if (r.name !== 'aws-xml-without-dom-parser') expect(inputs.some((i) => i.startsWith(`${r.name}:`)), `${r.name} was not resolved`).toBe(true)
    }
    expect(bundled('@aws-sdk/xml-builder/dist-es/xml-parser.js')).toBe(true)
  })
})
