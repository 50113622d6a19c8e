import { Miniflare } from 'miniflare'
import { afterAll, describe, expect, it } from 'vitest'
import { bundleFunction, functionEntries } from '../../infra/bundle'

/** A request every function answers without any store configured, and what it must say. */
const smoke: Record<string, { path: string; status: number; method?: string; body?: string; check?: (body: any) => void }> = {
  health: { path: '/api/version', status: 200, check: (b) => expect(b).toEqual({ version: 'v9.9.9' }) },
  backend: { path: '/health', status: 200, check: (b) => expect(b).toMatchObject({ status: 'ok', runtimes: 'none' }) },
  docs: { path: '/api/openapi.json', status: 200, check: (b) => expect(b.openapi).toBe('3.1.0') },
  auth: { path: '/api/auth/csrf', status: 200, check: (b) => expect(b.header).toBe(`${b.token}:${b.signed}`) },
  users: { path: '/api/user', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  keys: { path: '/api/keys', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  invites: { path: '/api/invites/verify', status: 400, method: 'POST', body: '{"token":"short"}', check: (b) => expect(b.error).toBe('Invalid invite token') },
  devices: { path: '/api/devices', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  'wallet-auth': { path: '/api/wallet-auth', status: 400, method: 'POST', body: '{}', check: (b) => expect(b).toMatchObject({ error: 'Address required', code: 'VALIDATION' }) },
  farcaster: { path: '/api/auth/farcaster/verify', status: 200, check: (b) => expect(b).toMatchObject({ issuer: 'https://auth.farcaster.xyz', domain: 'localhost', tokenGating: { enabled: false, chainId: 8453 } }) },
  oauth: { path: '/api/security/risc', status: 200, check: (b) => expect(b).toEqual({ status: 'ok' }) },
  stripe: { path: '/api/stripe/webhook', status: 503, method: 'POST', body: '{}', check: (b) => expect(b).toEqual({ error: 'Stripe webhook not configured', code: 'NOT_CONFIGURED' }) },
  billing: { path: '/api/billing', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  instance: { path: '/api/debug/dashboard-check', status: 200, check: (b) => expect(b).toMatchObject({ status: 'ok', checks: { database: 'error', gateway: 'unknown', auth: 'ok' } }) },
  calendar: { path: '/api/calendar?action=status', status: 200, check: (b) => expect(b).toEqual({ connected: false }) },
  agents: { path: '/api/agents', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  logs: { path: '/api/logs/active', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  cron: { path: '/api/cron/watchdog', status: 401, method: 'POST', body: '{}', check: (b) => expect(b).toEqual({ error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' }) },
  social: { path: '/api/social/posts', status: 401, method: 'POST', body: '{}', check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  colony: { path: '/api/colony/status', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  payments: {
    path: '/api/wallet/sessions',
    status: 503,
    method: 'POST',
    body: `{"walletAddress":"0x${'1'.repeat(40)}","txHash":"0x${'2'.repeat(64)}"}`,
    check: (b) => expect(b).toEqual({ error: 'Payment sessions not configured', code: 'NOT_CONFIGURED' }),
  },
  permissions: { path: '/api/permissions', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  wallet: { path: '/api/wallet/address', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  radio: { path: '/api/radio/webhook', status: 503, method: 'POST', body: '{}', check: (b) => expect(b).toEqual({ error: 'Mux webhook not configured', code: 'NOT_CONFIGURED' }) },
  chat: { path: '/api/queue/chat', status: 401, method: 'POST', body: '{}', check: (b) => expect(b).toEqual({ error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' }) },
  gateway: { path: '/api/v1/gateway', status: 400, method: 'POST', body: '{"plugin":"nope"}', check: (b) => expect(b).toMatchObject({ error: 'unknown_plugin', code: 'UNKNOWN_PLUGIN' }) },
  skills: { path: '/api/skills', status: 200, check: (b) => expect(b.skills.map((s: { scan: { trustTier: string } }) => s.scan.trustTier)).toEqual(expect.arrayContaining(['trusted'])) },
  files: { path: '/api/files', status: 401, check: (b) => expect(b).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' }) },
  passkeys: { path: '/api/passkey/auth/options', status: 400, method: 'POST', body: '{}', check: (b) => expect(b.error).toBe('Identifier is required') },
}

const open: Miniflare[] = []
afterAll(async () => {
  await Promise.all(open.map((mf) => mf.dispose()))
})

describe('every function bundles for workerd and answers in miniflare', () => {
  const entries = functionEntries()

  it('has a smoke request for every function', () => {
    expect(entries.map((e) => e.family).sort()).toEqual(Object.keys(smoke).sort())
  })

  for (const { family, entry } of entries) {
    it(`${family} boots in workerd and answers`, async () => {
      const { code } = await bundleFunction(entry)
      const mf = new Miniflare({
        // An explicit module list: the bundle keeps a few lazy `import()`s that miniflare's walker rejects.
        modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }],
        compatibilityDate: '2026-04-01',
        bindings: { APP_VERSION: 'v9.9.9', APP_ORIGIN: 'http://localhost:3000', SESSION_SECRET: 'smoke-secret' },
      })
      open.push(mf)
      const probe = smoke[family]
      const res = await mf.dispatchFetch(`http://localhost${probe.path}`, {
        method: probe.method ?? 'GET',
        body: probe.body,
        headers: probe.body ? { 'content-type': 'application/json' } : {},
      })
      const body = await res.json()
      expect(res.status, JSON.stringify(body)).toBe(probe.status)
      probe.check?.(body)
      // A store that is not configured answers a clear 503, never a crash.
      const missing = await mf.dispatchFetch('http://localhost/api/admin/health', { headers: { cookie: 'service-session=x' } })
      if (family === 'health') expect(await missing.json()).toEqual({ error: 'Database not configured', code: 'NOT_CONFIGURED' })
      else await missing.arrayBuffer()
    })
  }

  // Minifies every function in turn (~1 s each alone, more beside other suites): its own budget, not the 30 s default.
  it('every function deploys within 250 KB gzipped, without the modules infra/bundle.ts leaves out', { timeout: 180_000 }, async () => {
    for (const { family, entry } of entries) {
      const { code, gzipBytes } = await bundleFunction(entry, { minify: true })
      expect(gzipBytes / 1024, family).toBeLessThanOrEqual(250)
      expect(code.includes('Geçersiz'), `${family} carries zod's Turkish locale`).toBe(false)
      if (family === 'passkeys') expect(code).toContain('attestation certificate chains are refused')
    }
  })

  it('refuses a Node-only import under functions/ or lib/', async () => {
    const { writeFileSync, rmSync } = await import('node:fs')
    const bad = new URL('../../functions/.node-import-probe.ts', import.meta.url)
    writeFileSync(bad, "import { readFileSync } from 'node:fs'\nexport default { fetch: () => new Response(String(readFileSync)) }\n")
    try {
      await expect(bundleFunction(bad.pathname)).rejects.toThrow(/node:fs|Could not resolve/)
    } finally {
      rmSync(bad)
    }
  })
})
