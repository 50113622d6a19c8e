import { z } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import type { Agent } from '../../schema'
import { agents } from '../../schema'
import type { Db } from '../../lib/db/rls'
import { withUser } from '../../lib/db/rls'

export const VerificationSchema = z
  .object({
    agentId: z.string().max(255),
    verification: z.enum(['unverified', 'human_verified']),
    verified: z.boolean(),
    verifiedAt: z.string().max(64).nullable().openapi({ format: 'date-time' }),
  })
  .openapi('AgentVerification')

export const verificationJson = (a: Agent) => ({
  agentId: a.id,
  verification: a.verification === 'human_verified' ? ('human_verified' as const) : ('unverified' as const),
  verified: a.verification === 'human_verified',
  verifiedAt: a.verifiedAt ? a.verifiedAt.toISOString() : null,
})

/** Sets or clears the agent's `human_verified` mark, as its owner. */
export async function setVerification(db: Db, agent: Agent, verified: boolean) {
  const [row] = await withUser(db, agent.userId, (tx) =>
    tx
      .update(agents)
      .set({ verification: verified ? 'human_verified' : 'unverified', verifiedAt: verified ? new Date() : null, updatedAt: new Date() })
      .where(eq(agents.id, agent.id))
      .returning(),
  )
  return row
}
