import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deadline } from '../../lib/deadline'
import { listen, type Loopback } from '../support/loopback'

// A server that never answers: only the deadline can end a fetch to it.
let hanging: Loopback
let url = ''
beforeAll(async () => {
  hanging = await listen(createServer(() => {}))
  url = `${hanging.url}/`
})
afterAll(() => hanging.close())

describe('deadline', () => {
  it('ends a call to a host that never answers, and says it timed out', async () => {
    const d = deadline(200)
    const started = Date.now()
    try {
      await expect(fetch(url, { signal: d.signal })).rejects.toThrow()
    } finally {
      d.clear()
    }
    expect(d.timedOut).toBe(true)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('fires even when nothing else holds it: a composed signal no one keeps is not collected first', async () => {
    const d = deadline(150, new AbortController().signal)
    const pending = fetch(url, { signal: d.signal }).catch((e: unknown) => e)
    globalThis.gc?.()
    expect(await pending).toBeInstanceOf(Error)
    expect(d.timedOut).toBe(true)
    d.clear()
  })

  it('aborts with the outer signal first, and then is not a timeout', async () => {
    const outer = new AbortController()
    const d = deadline(10_000, outer.signal)
    const pending = fetch(url, { signal: d.signal }).catch((e: unknown) => e)
    outer.abort(new Error('caller gave up'))
    expect(await pending).toBeInstanceOf(Error)
    expect(d.signal.aborted).toBe(true)
    expect(d.timedOut).toBe(false)
    d.clear()
  })

  it('an outer signal already aborted aborts at once; clear() stops the timer', async () => {
    const outer = new AbortController()
    outer.abort()
    expect(deadline(10_000, outer.signal).signal.aborted).toBe(true)
    const d = deadline(50)
    d.clear()
    await new Promise((r) => setTimeout(r, 120))
    expect(d.signal.aborted).toBe(false)
    expect(d.timedOut).toBe(false)
  })
})
