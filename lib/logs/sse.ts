import type { Context } from 'hono'
import { streamSSE } from 'hono/streaming'
import type { StreamSlot } from './streams'
import { type LogEvent, type LogTail, MAX_CLIENT_BACKLOG } from './tail'

/**
 * One client's server-sent event stream of `tail`: `connected`, the buffered lines, new lines as `line`, and
 * `exit` before the stream closes. Events are written one after another from a per-client queue; a client that
 * falls `MAX_CLIENT_BACKLOG` events behind is dropped rather than held in memory. A client that goes away leaves
 * the tail (the last one starts its grace). With a `slot` (./streams.ts), the stream is bound to the session that
 * opened it: when that session ends it sends `exit` and closes; whenever it closes, the slot is released.
 */
export function streamTail(c: Context, tail: LogTail, slot?: StreamSlot): Response {
  return streamSSE(c, async (stream) => {
    const queue: LogEvent[] = []
    let wake: (() => void) | null = null
    let done = false
    const finish = () => {
      done = true
      wake?.()
    }
    const unsubscribe = tail.subscribe((event) => {
      if (queue.length >= MAX_CLIENT_BACKLOG) return finish()
      queue.push(event)
      wake?.()
    })
    stream.onAbort(() => {
      unsubscribe()
      finish()
    })
    slot?.whenEnded((text) => {
      unsubscribe()
      queue.length = 0
      queue.push({ type: 'exit', agentId: tail.agentId, text, code: 0 })
      finish()
    })
    try {
      while (!done || queue.length) {
        const event = queue.shift()
        if (!event) {
          await new Promise<void>((resolve) => (wake = resolve))
          wake = null
          continue
        }
        if (stream.aborted) break
        await stream.writeSSE({ event: event.type, data: JSON.stringify(event) })
        if (event.type === 'exit') break
      }
    } finally {
      unsubscribe()
      slot?.release()
    }
  })
}
