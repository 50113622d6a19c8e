import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { eq } from 'drizzle-orm'
import { isGatewayTokenUnreadable, openGatewayToken } from '../../../lib/agents/access'
import { SUSPENDED, suspendedAgent } from '../../../lib/agents/suspension'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { findChatAgent } from '../agent'
import { CHAT_QUEUE_PATH, CHAT_RETRIES, releaseJobTicket } from '../jobs'
import { admitTicket, chatWeight, LONG_MESSAGE_CHARS } from '../workload'
import type { Services } from '../../../lib/context'
import { asUser } from '../../../lib/db/rls'
import { ApiError } from '../../../lib/http/errors'
import { unavailableDependency } from '../../../lib/http/dependency'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { errorFields, log } from '../../../lib/log'
import { chatJobs, type Agent } from '../../../schema'
import { ChatBody, ChatQueuedSchema } from '../schemas'

export const route = createRoute(
  limitedRoute(
    limits.chat,
    signedInRoute({
      method: 'post',
      path: '/api/gateway/chat',
      operationId: 'queueChat',
      tags: ['Gateway'],
      summary: 'Queue a chat message for the caller’s agent',
      description:
        'Order of checks: the per-IP limit; the session; the body; paid access at the moment of use (' + PAID_ACCESS_RULE + '); ' +
        'the agent (a `suspended` one, whose runtime is stopped, is 409 until it is started again); its gateway token; the workload gate. ' +
        'The agent: among the caller’s agents that are not templates and have a provisioned runtime (a runtime service ' +
        'id or URL), a `running` one first and a `suspended` one last, then the most recently created. The workload gate holds a ticket for the job ' +
        'until it ends (or `CHAT_TICKET_TTL_SEC`, default 300 s): at most `CHAT_USER_SLOTS` (4) slots per user and ' +
        '`CHAT_GLOBAL_SLOTS` (200) platform-wide at once, and at most `CHAT_USER_PER_MINUTE` (20) and `CHAT_GLOBAL_PER_MINUTE` ' +
        `(2000) slots spent per calendar minute; a message over ${LONG_MESSAGE_CHARS} characters takes 2 slots, others 1. ` +
        'The job is stored (`queued`) and published on the queue to `POST /api/queue/chat`, which delivers it to the ' +
        'agent’s runtime (retried 3 times); poll it at `GET /api/jobs/{jobId}`. When the queue refuses the job it is ' +
        'marked `failed` and its slots are given back (502).',
      request: { body: jsonBody(ChatBody) },
      responses: {
        202: ok(ChatQueuedSchema, 'Queued'),
        400: errorResponse('`Message required` (missing, not a string or blank), or over 32 000 characters (`VALIDATION`); malformed JSON (`INVALID_JSON`)'),
        402: errorResponse(PLAN_REQUIRED_DOC),
        404: errorResponse('`User not found` (`USER_NOT_FOUND`); `No agent found`: no agent but templates; `No OpenClaw instance found`: no agent with a provisioned runtime (`NOT_FOUND`)'),
        409: errorResponse('`Agent suspended: start it again` (`INVALID_TRANSITION`): the chosen agent is `suspended`'),
        429: errorResponse(
          'The workload gate (`WORKLOAD_LIMIT`): `Too many chats in progress` (the caller’s slots), `Chat limit reached for this minute`, or `The platform is busy` (platform-wide slots or minute); `retryAfterSeconds` (also `Retry-After`) says when a slot frees or the minute ends, `reason` which limit',
        ),
        500: errorResponse('`Chat failed`: the job could not be stored (`INTERNAL`)'),
        502: errorResponse('`Queue unavailable`: the queue did not accept the job, which is marked `failed` (`QUEUE_UNAVAILABLE`)'),
        503: errorResponse(
          '`No gateway token available` (`NO_GATEWAY_TOKEN`): the agent’s runtime has no gateway token yet, or its stored token cannot be read with this server’s keys (then with `agentId` and a `hint`: repair the agent, `POST /api/agents/{id}/repair`, to give it a new token, or delete it); nothing is queued',
        ),
      },
    }),
  ),
)

export const handler: RouteHandler<typeof route> = async (c) => {
  const { message } = c.req.valid('json')
  const { services } = c.var
  const userId = c.var.user.id
  const agent = await findChatAgent(services, userId, { paid: true })
  if (agent.status === SUSPENDED) throw suspendedAgent()
  await assertGatewayToken(services, agent)

  const job = { id: crypto.randomUUID(), userId, agentId: agent.id, message, weight: chatWeight(message) }
  await failsAs500(() => admitTicket(services.kv, services.config, { userId, jobId: job.id, weight: job.weight }))
  try {
    await asUser(c, (tx) => tx.insert(chatJobs).values(job))
  } catch (e) {
    await releaseJobTicket(services, job)
    log.error('chat.store_failed', { jobId: job.id, ...errorFields(e) })
    if (unavailableDependency(e)) throw e
    throw chatFailed()
  }
  try {
    await services.queue.publish(CHAT_QUEUE_PATH, { jobId: job.id }, { deduplicationId: job.id, retries: CHAT_RETRIES })
  } catch (e) {
    log.error('chat.publish_failed', { jobId: job.id, ...errorFields(e) })
    await asUser(c, (tx) => tx.update(chatJobs).set({ status: 'failed', error: 'Queue unavailable', updatedAt: new Date() }).where(eq(chatJobs.id, job.id))).catch((e2) =>
      log.error('chat.mark_failed_failed', { jobId: job.id, ...errorFields(e2) }),
    )
    await releaseJobTicket(services, job)
    throw new ApiError('QUEUE_UNAVAILABLE')
  }
  log.info('chat.queued', { jobId: job.id, agentId: agent.id, weight: job.weight })
  return c.json({ success: true as const, queued: true as const, jobId: job.id, status: 'queued' as const, agentId: agent.id, agentName: agent.name }, 202)
}

const chatFailed = () => new ApiError('INTERNAL', 'Chat failed')

/** The gate's own refusal (429) and the kv store not answering (503 `KV_UNAVAILABLE`) pass; anything else is `Chat failed`. */
async function failsAs500(fn: () => Promise<void>) {
  try {
    await fn()
  } catch (e) {
    if (e instanceof ApiError || unavailableDependency(e)) throw e
    log.error('chat.gate_failed', errorFields(e))
    throw chatFailed()
  }
}

/**
 * The spec's 503 `No gateway token available` (`NO_GATEWAY_TOKEN`) unless the agent's sealed gateway token opens; when
 * it was sealed under a key this server no longer has, `hint` says what to do.
 */
async function assertGatewayToken(services: Pick<Services, 'config'>, agent: Agent) {
  let unreadable = false
  try {
    if ((await openGatewayToken(services.config, agent)) !== null) return
  } catch (e) {
    unreadable = isGatewayTokenUnreadable(e)
    if (!unreadable) log.warn('chat.gateway_token_failed', { agentId: agent.id, ...errorFields(e) })
  }
  if (!unreadable) throw new ApiError('NO_GATEWAY_TOKEN')
  throw new ApiError('NO_GATEWAY_TOKEN', {
    extra: { agentId: agent.id, hint: "The agent's gateway token cannot be read with this server's keys: repair the agent (POST /api/agents/{id}/repair) to give it a new one, or delete it" },
  })
}
