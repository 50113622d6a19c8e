import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readCapped } from '../../lib/http/read-capped'
import { httpGateway, MAX_ANSWER_BYTES } from '../../lib/runtime/gateway'
import { listen, type Loopback } from '../support/loopback'

/** A runtime that answers every request with an endless body: the platform must stop reading at its cap. */
let server: Loopback
let sent = 0
beforeAll(async () => {
  server = await listen(
    createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const chunk = Buffer.alloc(64 * 1024, 'a')
      const pump = () => {
        while (!res.destroyed && sent < 64 * 1024 * 1024) {
          sent += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        res.end()
      }
      pump()
    }),
  )
})
afterAll(() => server.close())

describe('answers from a runtime are read no deeper than a cap', () => {
  it('readCapped returns the body under the cap and null over it, cancelling the rest', async () => {
    expect(await readCapped(new Response('{"ok":true}'), 100)).toBe('{"ok":true}')
    expect(await readCapped(new Response('x'.repeat(101)), 100)).toBeNull()
    expect(await readCapped(new Response(null), 100)).toBe('')
  })

  it('an endless gateway answer is refused as too large, long before the runtime has sent it all', async () => {
    sent = 0
    await expect(httpGateway(server.url, 'token').sessions()).rejects.toThrow('Runtime answer too large')
    expect(sent).toBeLessThan(64 * 1024 * 1024)
    expect(MAX_ANSWER_BYTES).toBe(2 * 1024 * 1024)
  })
})
