import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent, TOKEN_UNREADABLE_DOC } from '../../../lib/agents/access'
import { agentJson, type LifecycleAction, runLifecycle } from '../../../lib/agents/lifecycle'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { agentRoute } from '../route'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { AgentIdParams, AgentSchema, NOT_FOUND, PROVIDER_DOWN } from '../../../lib/agents/schemas'

// update has its own route (an image in the body); factory-reset is the instance's (`POST /api/instance/{userId}/factory-reset`).
type Action = Exclude<LifecycleAction, 'update' | 'factory-reset'>

const WHAT: Record<Action, { operationId: string; summary: string; after: string }> = {
  start: { operationId: 'startAgent', summary: 'Start the agent’s runtime', after: '`starting` (the probe of `GET /api/agents/{id}/stats` turns it `running`)' },
  stop: { operationId: 'stopAgent', summary: 'Stop the agent’s runtime', after: '`stopped`' },
  restart: { operationId: 'restartAgent', summary: 'Restart the agent’s runtime', after: '`starting`' },
  repair: {
    operationId: 'repairAgent',
    summary: 'Redeploy the agent’s runtime from its image and configuration',
    after:
      '`starting`. An agent whose stored gateway token this server cannot open (its keys changed or were lost), or that has none, is re-keyed: ' +
      'the runtime is redeployed with a new token, which is then stored (read it at `GET /api/agents/{id}/token`)',
  },
  'reset-memory': { operationId: 'resetAgentMemory', summary: 'Reset the agent’s memory through its gateway', after: 'unchanged' },
}

/** `POST /api/agents/{id}/<action>`: the owner's call of lib/agents/lifecycle.ts `runLifecycle`. */
export function lifecycleRoute<A extends Action>(action: A) {
  const what = WHAT[action]
  const route = agentRoute({
    method: 'post',
    path: `/api/agents/{id}/${action}` as `/api/agents/{id}/${A}`,
    operationId: what.operationId,
    tags: ['Agents'],
    summary: what.summary,
    description:
      `Through the runtime provider (the persisted \`runtimeServiceId\` first). The agent's status after: ${what.after}. ` +
      'A provider failure other than a conflict leaves the agent in status `error` with the reason. `stop` does not need the ' +
      'agent’s gateway token and `repair` replaces one that cannot be read; the other actions answer 409 `SECRET_UNREADABLE` ' +
      '(nothing done) when it cannot be. ' +
      (action === 'stop'
        ? 'Open without paid access (it uses nothing); a `suspended` agent, whose runtime is already stopped, is answered as it is.'
        : `Needs the caller's paid access at the moment of use (${PAID_ACCESS_RULE}): 402 \`Paid plan required\` otherwise. ` +
          (action === 'start'
            ? 'Starting a `suspended` agent resumes it when its owner pays again, counted against the plan’s agents like a new one (429 `AGENT_LIMIT` when the plan is full).'
            : 'A `suspended` agent must be started first (409).')),
    request: { params: AgentIdParams },
    responses: {
      200: ok(AgentSchema, 'The agent as stored afterwards'),
      ...(action === 'stop' ? {} : { 402: errorResponse(PLAN_REQUIRED_DOC) }),
      404: errorResponse(`${NOT_FOUND}; or the provider has no runtime for it (\`NOT_FOUND\`)`),
      409: errorResponse(`The agent is a template, which has no runtime, or suspended and this is not \`start\` (\`INVALID_TRANSITION\`); the provider refused the operation (\`CONFLICT\`); or ${TOKEN_UNREADABLE_DOC}`),
      ...(action === 'start' ? { 429: errorResponse('Resuming a `suspended` agent: the plan’s agent count is reached (`AGENT_LIMIT`, with `limit` and `plan`)') } : {}),
      502: errorResponse(PROVIDER_DOWN),
    },
  })
  const handler: RouteHandler<typeof route> = async (c) => {
    const agent = await findOwnAgent(c.var.services.db, c.var.user.id, c.req.valid('param').id)
    return c.json(agentJson(await runLifecycle(c.var.services, agent, action)), 200)
  }
  return { route, handler }
}
