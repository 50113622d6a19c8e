import { afterEach, describe, expect, it } from 'vitest'
import { LocalQueue } from '../../infra/local-queue'
import type { OutboxMessage, QueueOutbox } from '../../infra/queue-outbox'

/**
 * The in-process queue accepts a message once its outbox holds it (as QStash answers once it has stored one): a
 * publish that resolved survives a crash right after it, and an outbox that cannot record the message refuses the
 * publish (the caller answers as for a queue that is down) instead of keeping it only in memory.
 */
function fakeOutbox() {
  const added: OutboxMessage[] = []
  const state = { failing: false, hold: undefined as Promise<void> | undefined }
  const outbox: QueueOutbox = {
    async add(m) {
      await state.hold
      if (state.failing) throw new Error('database unavailable')
      added.push(m)
    },
    retry: async () => {},
    finish: async () => {},
    saveSchedule: async () => {},
    scheduleRan: async () => {},
    load: async () => ({ pending: [], deduplicated: [], schedules: [] }),
    prune: async () => {},
  }
  return { outbox, added, state }
}

const queues: LocalQueue[] = []
afterEach(async () => {
  for (const q of queues.splice(0)) await q.close()
})

function queueOver(outbox: QueueOutbox, delivered: string[]) {
  const q = new LocalQueue({
    publicUrl: 'http://localhost:8787',
    signingKey: 'outbox-publish-key',
    outbox,
    deliver: async (req) => {
      delivered.push(await req.text())
      return new Response('ok')
    },
  })
  queues.push(q)
  return q
}

describe('LocalQueue.publish with a durable outbox', () => {
  it('resolves only once the outbox holds the message', async () => {
    const { outbox, added, state } = fakeOutbox()
    let release!: () => void
    state.hold = new Promise<void>((r) => (release = r))
    const q = queueOver(outbox, [])
    let resolved = false
    const publishing = q.publish('/api/queue/x', { n: 1 }).then((r) => ((resolved = true), r))
    await new Promise((r) => setTimeout(r, 20))
    expect(resolved).toBe(false)
    expect(added).toEqual([])
    release()
    const { messageId } = await publishing
    expect(added.map((m) => m.messageId)).toEqual([messageId])
  })

  it('an outbox that cannot record it refuses the publish: nothing delivered, the deduplication id free; the next publish goes through', async () => {
    const { outbox, added, state } = fakeOutbox()
    const delivered: string[] = []
    const q = queueOver(outbox, delivered)
    state.failing = true
    await expect(q.publish('/api/queue/x', { n: 1 }, { deduplicationId: 'job-1' })).rejects.toThrow(/Queue unavailable/)
    await q.idle()
    expect(delivered).toEqual([])
    expect(added).toEqual([])

    state.failing = false
    const { messageId } = await q.publish('/api/queue/x', { n: 2 }, { deduplicationId: 'job-1' })
    await q.idle()
    expect(added.map((m) => m.messageId)).toEqual([messageId])
    expect(delivered).toEqual([JSON.stringify({ n: 2 })])
  })
})
