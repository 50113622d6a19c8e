import { waitFor } from './wait'

type Socket = {
  accept(): void
  send(data: string): void
  close(code?: number): void
  addEventListener(type: 'message', fn: (e: { data: string }) => void): void
  addEventListener(type: 'close', fn: (e: { code: number; reason: string }) => void): void
}

type Message = Record<string, unknown>

/**
 * Accepts the client end of a Worker's 101 (miniflare's Response, or a Durable Object namespace's) and collects the
 * JSON messages that arrive on it: `next(count)` the first `count` of them, `nextMatching` the first one a test
 * looks for, each taken from those kept; `closed` the close frame.
 */
export function acceptSocket(res: { status: number }) {
  const ws = (res as { webSocket?: Socket }).webSocket
  if (res.status !== 101 || !ws) throw new Error(`expected 101 with a WebSocket, got ${res.status}`)
  const messages: Message[] = []
  ws.addEventListener('message', (e) => messages.push(JSON.parse(e.data)))
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.addEventListener('close', (e) => r({ code: e.code, reason: e.reason })))
  ws.accept()
  return {
    ws,
    messages,
    closed,
    async next(count: number) {
      await waitFor(() => messages.length >= count, { ms: 5_000, what: `${count} socket messages` })
      return messages.splice(0, count)
    },
    async nextMatching(match: (m: Message) => boolean) {
      let found: Message | undefined
      await waitFor(() => !!(found = messages.find(match)), { ms: 10_000, what: 'a socket message' })
      messages.splice(messages.indexOf(found!), 1)
      return found!
    },
  }
}
