import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listen } from './loopback'

export type SoulReply = { status?: number; body?: unknown; raw?: string; delayMs?: number; hang?: boolean }

/**
 * A soul host on loopback: `GET /colony`, `/soul`, `/health` answer what the test sets (`replies[path]`),
 * optionally late, never (`hang`), or with a raw body. Records the paths and bearer tokens it was asked with.
 */
export async function startSoulHost(replies: Record<string, SoulReply>) {
  const seen: { path: string; authorization?: string }[] = []
  const open = new Set<ServerResponse>()
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    seen.push({ path, authorization: req.headers.authorization })
    const reply = replies[path] ?? { status: 404, body: { error: 'not found' } }
    if (reply.hang) return void open.add(res)
    setTimeout(() => {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' })
      res.end(reply.raw ?? JSON.stringify(reply.body ?? {}))
    }, reply.delayMs ?? 0)
  })
  const { url, close } = await listen(server)
  return {
    url,
    replies,
    seen,
    close: () => {
      for (const res of open) res.destroy()
      return close()
    },
  }
}

export type SoulHost = Awaited<ReturnType<typeof startSoulHost>>

/** A colony as a soul host might send it: a root, two children, a template and one weak agent. */
export const COLONY = {
  root: {
    address: '0x1111111111111111111111111111111111111111',
    designation: 'Prime',
    fitness: { total: 82.5, prediction: 70, execution: 90 },
    wallet_balance: { formatted: '12.34', token: 'USDC' },
    clone_available: true,
    clone_price: '25',
    soul: { active: true, dormant: false, total_cycles: 1234, mode: 'explore', active_plan: { id: 'p1' }, free_energy: 0.42, brain: { model: 'x' }, transformer: null },
    colony: { rank: 1, can_spawn: true, should_cull: false, niche: 'music' },
  },
  agents: [
    { id: 'root', name: 'Prime', generation: 1, fitness: 82.5, status: 'active', children: ['c1', 'c2'], endpoints: [{ slug: 'mix', description: 'Mixes', price: '0.01' }], uptime: 3600, version: '1.2.0' },
    { id: 'c1', name: 'Child one', generation: 2, fitness: 60, status: 'active', parent: '0x1111111111111111111111111111111111111111', uptime: 100 },
    { id: 'c2', name: 'Child two', generation: 2, fitness: 30, status: 'culling', parent: '0x1111111111111111111111111111111111111111' },
    { id: 'blueprint', name: 'Template', status: 'template', fitness: 100 },
  ],
}
