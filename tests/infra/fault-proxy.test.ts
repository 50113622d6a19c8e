import { createServer as createHttpServer } from 'node:http'
import { connect, createServer as createTcpServer, type Socket } from 'node:net'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy'
import { listen, type Loopback } from '../support/loopback'
import { integrationConfigured } from '../support/stores'

/** Connects, sends `text`, resolves with what came back before `waitMs` (or the socket's end or error). */
function exchange(port: number, text: string, waitMs = 300): Promise<{ data: string; error?: string; ms: number; socket: Socket }> {
  const started = Date.now()
  return new Promise((resolve) => {
    let data = ''
    const socket = connect(port, '127.0.0.1')
    const done = (error?: string) => {
      clearTimeout(timer)
      resolve({ data, error, ms: Date.now() - started, socket })
    }
    const timer = setTimeout(() => done(), waitMs)
    socket.on('data', (c) => {
      data += c.toString()
      if (data.length >= text.length) done()
    })
    socket.on('error', (e: NodeJS.ErrnoException) => done(e.code))
    socket.on('close', () => done(data ? undefined : 'closed'))
    socket.write(text)
  })
}

describe('fault proxy, TCP mode (in front of an echo server)', () => {
  let echo: Loopback
  let proxy: FaultProxy
  const open: Socket[] = []

  beforeAll(async () => {
    echo = await listen(createTcpServer((s) => s.on('error', () => {}).pipe(s)))
    proxy = await startFaultProxy({ target: `127.0.0.1:${echo.port}`, mode: 'tcp' })
  })
  afterEach(async () => {
    for (const s of open.splice(0)) s.destroy()
    await proxy.set('pass')
  })
  afterAll(async () => {
    await proxy?.close()
    await echo?.close()
  })

  it('passes bytes both ways, in order', async () => {
    const r = await exchange(proxy.port, 'hello, peer')
    open.push(r.socket)
    expect(r).toMatchObject({ data: 'hello, peer', error: undefined })
  })

  it('delays each chunk by the given time, keeping their order', async () => {
    await proxy.set({ kind: 'delay', ms: 120 })
    const r = await exchange(proxy.port, 'slow but whole', 1000)
    open.push(r.socket)
    expect(r.data).toBe('slow but whole')
    expect(r.ms).toBeGreaterThanOrEqual(2 * 120 - 20) // there and back
  })

  it('refuses new connections and resets open ones, then listens again on the same port', async () => {
    const before = await exchange(proxy.port, 'x')
    open.push(before.socket)
    const port = proxy.port
    const gone = new Promise<string | undefined>((resolve) => {
      before.socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code))
      before.socket.on('close', () => resolve('closed'))
    })
    await proxy.set('refuse')
    expect(['ECONNRESET', 'closed']).toContain(await gone)
    const refused = await exchange(port, 'x')
    expect(refused.error).toBe('ECONNREFUSED')
    await proxy.set('pass')
    expect(proxy.port).toBe(port)
    const after = await exchange(port, 'back')
    open.push(after.socket)
    expect(after.data).toBe('back')
  })

  it('resets each new connection', async () => {
    await proxy.set('reset')
    const r = await exchange(proxy.port, 'x')
    expect(r.data).toBe('')
    expect(['ECONNRESET', 'closed']).toContain(r.error)
  })

  it('blackholes: the connection opens and nothing ever comes back', async () => {
    const seen = proxy.seen
    await proxy.set('blackhole')
    const r = await exchange(proxy.port, 'anyone?', 300)
    open.push(r.socket)
    expect(r).toMatchObject({ data: '', error: undefined })
    expect(r.ms).toBeGreaterThanOrEqual(290)
    expect(r.socket.destroyed).toBe(false)
    expect(proxy.seen).toBe(seen + 1)
  })

  it.runIf(integrationConfigured)('in front of the real Postgres: queries pass, a refused peer fails fast, and it comes back', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!)
    const pgProxy = await startFaultProxy({ target: `${url.hostname}:${url.port || 5432}`, mode: 'tcp' })
    const through = new URL(url)
    through.hostname = '127.0.0.1'
    through.port = String(pgProxy.port)
    const query = async () => {
      const client = new pg.Client({ connectionString: through.toString(), connectionTimeoutMillis: 500 })
      try {
        await client.connect()
        return (await client.query('select 41 + 1 as n')).rows[0].n as number
      } finally {
        await client.end().catch(() => {})
      }
    }
    try {
      expect(await query()).toBe(42)
      await pgProxy.set('refuse')
      await expect(query()).rejects.toMatchObject({ code: 'ECONNREFUSED' })
      await pgProxy.set('blackhole')
      const started = Date.now()
      await expect(query()).rejects.toThrow(/timeout/i)
      expect(Date.now() - started).toBeLessThan(2000)
      await pgProxy.set('pass')
      expect(await query()).toBe(42)
    } finally {
      await pgProxy.close()
    }
  })
})

describe('fault proxy, HTTP mode (in front of an HTTP peer)', () => {
  let peer: Loopback
  let proxy: FaultProxy
  const hits: Array<{ method: string; path: string; body: string; header?: string }> = []

  beforeAll(async () => {
    peer = await listen(
      createHttpServer((req, res) => {
        let body = ''
        req.on('data', (c) => (body += c))
        req.on('end', () => {
          hits.push({ method: req.method!, path: req.url!, body, header: req.headers['x-test'] as string | undefined })
          res.writeHead(201, { 'content-type': 'application/json', 'x-peer': 'yes' }).end(JSON.stringify({ echoed: body }))
        })
      }),
    )
    proxy = await startFaultProxy({ target: peer.url, mode: 'http' })
  })
  afterEach(async () => {
    hits.length = 0
    await proxy.set('pass')
  })
  afterAll(async () => {
    await proxy?.close()
    await peer?.close()
  })

  const post = (signal?: AbortSignal) => fetch(`${proxy.url}/v1/things?x=1`, { method: 'POST', headers: { 'x-test': 't' }, body: 'payload', signal })

  it('passes requests and answers through unchanged', async () => {
    const res = await post()
    expect(res.status).toBe(201)
    expect(res.headers.get('x-peer')).toBe('yes')
    expect(await res.json()).toEqual({ echoed: 'payload' })
    expect(hits).toEqual([{ method: 'POST', path: '/v1/things?x=1', body: 'payload', header: 't' }])
  })

  it('answers a chosen status without reaching the peer', async () => {
    await proxy.set({ kind: 'status', status: 503 })
    const res = await post()
    expect(res.status).toBe(503)
    await res.text()
    expect(hits).toHaveLength(0)
  })

  it('delays each request', async () => {
    await proxy.set({ kind: 'delay', ms: 150 })
    const started = Date.now()
    expect((await post()).status).toBe(201)
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    expect(hits).toHaveLength(1)
  })

  it('resets the connection of each request; the peer sees nothing', async () => {
    await proxy.set('reset')
    await expect(post()).rejects.toThrow()
    expect(hits).toHaveLength(0)
  })

  it('blackholes: no answer ever, so only the caller’s own timeout ends the wait', async () => {
    await proxy.set('blackhole')
    const started = Date.now()
    await expect(post(AbortSignal.timeout(250))).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(Date.now() - started).toBeLessThan(1000)
    expect(hits).toHaveLength(0)
  })

  it('refuses connections while down, and passes again once back', async () => {
    await proxy.set('refuse')
    await expect(post()).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } })
    await proxy.set('pass')
    expect((await post()).status).toBe(201)
    expect(hits).toHaveLength(1)
  })
})
