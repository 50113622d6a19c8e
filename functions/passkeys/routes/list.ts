import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { desc, eq } from 'drizzle-orm'
import { readAsUser } from '../../../lib/db/rls'
import { ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { passkeys } from '../../../schema'
import { toPasskeyItem } from '../item'
import { PasskeyItemSchema } from '../schemas'

export const route = signedInRoute({
  method: 'get',
  path: '/api/passkeys',
  operationId: 'listPasskeys',
  tags: ['Passkeys'],
  summary: "The caller's passkeys, newest first",
  description:
    'Each passkey that can sign in to this account: its credential `id`, `label`, when it was added and last ' +
    'used. Never the public key or the signature counter. Remove one with `DELETE /api/passkeys/{id}`.',
  responses: {
    200: ok(z.object({ passkeys: z.array(PasskeyItemSchema) }).openapi('PasskeyList')),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const me = c.var.user.id
  const rows = await readAsUser(c, (tx) =>
    tx
      .select({ id: passkeys.id, label: passkeys.label, createdAt: passkeys.createdAt, lastUsedAt: passkeys.lastUsedAt })
      .from(passkeys)
      .where(eq(passkeys.userId, me))
      .orderBy(desc(passkeys.createdAt), desc(passkeys.id)),
  )
  return c.json({ passkeys: rows.map(toPasskeyItem) }, 200)
}
