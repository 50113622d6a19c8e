import { z } from '@hono/zod-openapi'
import { planRecord } from '../../../lib/auth/plan'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { findOwnAgent } from '../../../lib/agents/access'
import { agentJson } from '../../../lib/agents/lifecycle'
import { normalizePlan, PLAN_NAMES } from '../../../lib/billing/plans'
import { asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { agents } from '../../../schema'
import { agentRoute } from '../route'
import { AgentConfigSchema, AgentIdParams, AgentNameField, AgentSchema, AiProviderField, NOT_FOUND, PlanField } from '../../../lib/agents/schemas'

const Body = z
  .object(
    {
      name: AgentNameField.optional(),
      plan: PlanField.optional(),
      aiProvider: AiProviderField.nullable().optional(),
      config: AgentConfigSchema.optional(),
    },
    { error: 'Request body must be a JSON object' },
  )
  .strict()
  .openapi('UpdateAgent')

export const route = agentRoute({
  method: 'put',
  path: '/api/agents/{id}',
  operationId: 'updateAgent',
  tags: ['Agents'],
  summary: 'Update an agent’s metadata: name, plan, AI provider, config',
  description:
    'Only the fields sent change; `config` replaces the whole configuration. `plan` may not be above the caller’s own ' +
    'plan (solo < collective < label < network; an admin’s is network). The runtime is not restarted.',
  request: { params: AgentIdParams, body: jsonBody(Body) },
  responses: {
    200: ok(AgentSchema),
    400: errorResponse('A field is invalid or unknown (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
    403: errorResponse('`plan` is above the caller’s own plan (`PLAN_EXCEEDED`); or a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
    404: errorResponse(NOT_FOUND),
    409: errorResponse('Another of the caller’s agents has this name (`CONFLICT`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { id } = c.req.valid('param')
  const body = c.req.valid('json')
  const me = c.var.user
  const { db } = c.var.services
  const agent = await findOwnAgent(db, me.id, id)
  if (body.plan) {
    const own = me.isAdmin ? 'network' : normalizePlan((await planRecord(db, me.id)).plan)
    if (PLAN_NAMES.indexOf(body.plan) > PLAN_NAMES.indexOf(own)) {
      throw new ApiError('PLAN_EXCEEDED', `Plan ${body.plan} is above your plan (${own})`)
    }
  }
  const [row] = await asUser(c, (tx) =>
    tx
      .update(agents)
      .set({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.plan !== undefined ? { plan: body.plan } : {}),
        ...(body.aiProvider !== undefined ? { aiProvider: body.aiProvider } : {}),
        ...(body.config !== undefined ? { config: body.config } : {}),
        updatedAt: new Date(),
      })
      .where(eq(agents.id, agent.id))
      .returning(),
  )
  return c.json(agentJson(row), 200)
}
