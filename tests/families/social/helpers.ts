import { agents, type Agent } from '../../../schema'
import type { Harness, SeededUser } from '../../support/harness'
import { call } from '../../support/requests'

let seq = 0
const DAY = 24 * 60 * 60 * 1000

/** An agent of `user`, two days old (links allowed) unless told otherwise. */
export async function seedPoster(h: Harness, user: SeededUser, over: Partial<typeof agents.$inferInsert> = {}): Promise<Agent> {
  const [row] = await h.db
    .insert(agents)
    .values({ userId: user.id, name: `poster-${++seq}`, status: 'running', createdAt: new Date(Date.now() - 2 * DAY), ...over })
    .returning()
  return row
}

/** A unique text per call, so only the duplicate tests repeat one. */
export const text = (prefix = 'hello') => `${prefix} ${crypto.randomUUID()}`

export const post = (h: Harness, user: SeededUser | undefined, body: unknown, headers?: Record<string, string>) =>
  call(h, 'POST', '/api/social/posts', { user, body, headers })
