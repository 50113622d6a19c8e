import { Miniflare } from 'miniflare'
import type { Readable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { bundleFunction, functionEntries } from '../../infra/bundle'

// Workers Logs reads the JSON a Worker writes with console.*: the bundled function writes the same
// `request` line as the Node server (tests/http/request-log.test.ts).
let mf: Miniflare | undefined
afterAll(() => mf?.dispose())

describe('request log in workerd', () => {
  it('a bundled function writes one JSON `request` line per request, with the server id', async () => {
    const entry = functionEntries().find((e) => e.family === 'keys')!.entry
    const { code } = await bundleFunction(entry)
    let out = ''
    const collect = (stream: Readable) => stream.on('data', (chunk: Buffer) => void (out += chunk.toString()))
    mf = new Miniflare({
      modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }],
      compatibilityDate: '2026-04-01',
      bindings: { APP_ORIGIN: 'http://localhost:3000', SESSION_SECRET: 'log-secret' },
      handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
        collect(stdout)
        collect(stderr)
      },
    })
    const id = crypto.randomUUID()
    const res = await mf.dispatchFetch(`http://localhost/api/keys/${id}?token=querysecret`, {
      headers: { 'x-request-id': 'client-trace-7', cookie: 'service-session=cookiesecret' },
    })
    await res.arrayBuffer()
    const requestId = res.headers.get('x-request-id')
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)

    // stdio arrives asynchronously: wait for the line.
    const deadline = Date.now() + 5000
    const lines = () => out.split('\n').filter((l) => l.includes('"event":"request"'))
    while (!lines().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(lines()).toHaveLength(1)
    const line = lines()[0]
    const event = JSON.parse(line.slice(line.indexOf('{')))
    expect(event).toMatchObject({
      level: 'info',
      event: 'request',
      requestId,
      clientRequestId: 'client-trace-7',
      method: 'GET',
      route: '/api/keys/:id',
      status: res.status,
    })
    expect(typeof event.durationMs).toBe('number')
    for (const leak of [id, 'querysecret', 'cookiesecret']) expect(line).not.toContain(leak)
  })
})
