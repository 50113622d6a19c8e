import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { readAsUser } from '../../../lib/db/rls'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { users } from '../../../schema'
import { countField } from '../../../lib/http/fields'

const DAY_MS = 24 * 60 * 60 * 1000

const TrialSchema = z
  .object({
    active: z.boolean(),
    startedAt: z.string().max(64).nullable(),
    endsAt: z.string().max(64).nullable(),
    daysRemaining: countField().openapi({ description: 'Whole days left, rounded up; 0 once ended' }),
  })
  .openapi('Trial')

export const route = signedInRoute({
  method: 'get',
  path: '/api/trial',
  operationId: 'getTrial',
  tags: ['Account'],
  summary: "The signed-in user's 7-day trial",
  description:
    'The trial’s dates, for every account: `active` says its 7 days are running. It gives paid access (the solo plan’s ' +
    'limits) only to an account with a verified real mailbox: a confirmed email or Google’s; the derived address of a ' +
    'wallet or Farcaster account is not one, so such an account needs a plan to use agents.',
  responses: { 200: ok(TrialSchema) },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  // RLS confines the read to the caller's own row.
  const [user] = await readAsUser(c, (tx) => tx.select({ startedAt: users.trialStartedAt, endsAt: users.trialEndsAt }).from(users))
  const now = Date.now()
  const endsAt = user?.endsAt ?? null
  const left = endsAt ? endsAt.getTime() - now : 0
  return c.json(
    {
      active: left > 0,
      startedAt: user?.startedAt?.toISOString() ?? null,
      endsAt: endsAt?.toISOString() ?? null,
      daysRemaining: Math.max(0, Math.ceil(left / DAY_MS)),
    },
    200,
  )
}
