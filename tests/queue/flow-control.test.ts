import { describe, expect, it } from 'vitest'
import { LocalQueue } from '../../infra/local-queue'

describe('in-process queue flow control (QStash `flowControl.parallelism`)', () => {
  it('never has more than `parallelism` deliveries of one key in flight, and delivers them all', async () => {
    let active = 0
    let peak = 0
    const seen: number[] = []
    const queue = new LocalQueue({
      publicUrl: 'http://127.0.0.1:1',
      signingKey: 'flow-key',
      deliver: async (req) => {
        active++
        peak = Math.max(peak, active)
        seen.push((await req.json()).n)
        await new Promise((r) => setTimeout(r, 20))
        active--
        return new Response('ok')
      },
    })
    for (let n = 0; n < 12; n++) await queue.publish('/api/x', { n }, { flowControl: { key: 'k', parallelism: 3 } })
    await queue.idle()
    queue.close()
    expect(peak).toBe(3)
    expect(seen.sort((a, b) => a - b)).toEqual([...Array(12).keys()])
  })
})
