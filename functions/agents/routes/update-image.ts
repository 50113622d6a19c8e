import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent, TOKEN_UNREADABLE_DOC } from '../../../lib/agents/access'
import { agentJson, runLifecycle } from '../../../lib/agents/lifecycle'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { agentRoute } from '../route'
import { AgentIdParams, AgentSchema, NOT_FOUND, PROVIDER_DOWN } from '../../../lib/agents/schemas'

// An OCI reference: [registry/]repository[:tag][@digest], lower-case repository path.
const IMAGE = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]{1,5})?(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/

const Body = z
  .object(
    {
      image: z
        .string({ error: 'image is required' })
        .max(255, 'image must be at most 255 characters')
        .regex(IMAGE, 'image must be an image reference such as ghcr.io/org/runtime:1.2.3')
        .optional()
        .openapi({ example: 'ghcr.io/agent-platform/runtime:1.2.3', description: "The image to run; the platform's current `RUNTIME_IMAGE` when absent" }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .strict()
  .openapi('UpdateAgentImage')

export const route = agentRoute({
  method: 'post',
  path: '/api/agents/{id}/update',
  operationId: 'updateAgentImage',
  tags: ['Agents'],
  summary: 'Move the agent’s runtime to another image',
  description:
    "Redeploys the runtime from `image` (else the platform's current image) through the provider; the agent's status " +
    "after is `starting` and its stored image the new one. `image` must be a tag or digest of the platform's runtime " +
    'repository (the repository of `RUNTIME_IMAGE`): an owner picks a version, never an image of their own, which would ' +
    "run their code in the platform's project (400 otherwise). " +
    'A provider failure other than a conflict leaves status `error`. Needs the caller’s paid access at the moment of use ' +
    `(${PAID_ACCESS_RULE}); a \`suspended\` agent must be started first.`,
  request: { params: AgentIdParams, body: jsonBody(Body) },
  responses: {
    200: ok(AgentSchema, 'The agent as stored afterwards'),
    400: errorResponse('`image` is not an image reference or too long, or `Image must be a version of <repository>` (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
    402: errorResponse(PLAN_REQUIRED_DOC),
    404: errorResponse(`${NOT_FOUND}; or the provider has no runtime for it (\`NOT_FOUND\`)`),
    409: errorResponse(`The agent is a template or \`suspended\` (\`INVALID_TRANSITION\`); the provider refused the operation (\`CONFLICT\`); or ${TOKEN_UNREADABLE_DOC}`),
    502: errorResponse(PROVIDER_DOWN),
  },
})

/** The repository of an image reference: everything before its tag or digest. */
export const repositoryOf = (image: string) => image.replace(/@sha256:[a-f0-9]{64}$/, '').replace(/:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/, '')

export const handler: RouteHandler<typeof route> = async (c) => {
  const { image } = c.req.valid('json')
  const runtimeRepository = repositoryOf(c.var.services.config.RUNTIME_IMAGE)
  if (image && repositoryOf(image) !== runtimeRepository) {
    throw new ApiError('VALIDATION', `Image must be a version of ${runtimeRepository}`)
  }
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
  const updated = await runLifecycle(c.var.services, agent, 'update', { image: image ?? c.var.services.config.RUNTIME_IMAGE })
  return c.json(agentJson(updated), 200)
}
