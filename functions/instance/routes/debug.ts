import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent, agentGateway, TOKEN_UNREADABLE_DOC } from '../../../lib/agents/access'
import { providerApiError } from '../../../lib/agents/lifecycle'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC, requirePaidAccess } from '../../../lib/auth/plan'
import { RuntimeProviderError } from '../../../lib/runtime/provider'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { errorFields, log } from '../../../lib/log'
import { DebugBody, DebugResultSchema } from '../schemas'

export const route = signedInRoute({
  method: 'post',
  path: '/api/debug',
  operationId: 'runDiagnostic',
  tags: ['Diagnostics'],
  summary: 'Run one allow-listed diagnostic command in one of the caller’s runtimes',
  description:
    'Exactly ten commands, run for real in the runtime through its gateway; `exitCode` (0 success) and `duration` (ms) are ' +
    'measured where the command ran. Nothing outside the allowlist ever reaches a runtime. Running a command uses the ' +
    `runtime: it needs paid access at the moment of use (${PAID_ACCESS_RULE}).`,
  request: { body: jsonBody(DebugBody) },
  responses: {
    200: ok(DebugResultSchema),
    400: errorResponse('`command and agentId are required`, `Command not allowed` (`VALIDATION`); or `Invalid JSON body` (`INVALID_JSON`)'),
    402: errorResponse(PLAN_REQUIRED_DOC),
    404: errorResponse('`Agent not found` (not the caller’s); or the runtime does not exist (`NOT_FOUND`)'),
    409: errorResponse(`Nothing run: ${TOKEN_UNREADABLE_DOC}`),
    502: errorResponse('The runtime could not be reached or failed the call (`RUNTIME_UNAVAILABLE`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { command, agentId } = c.req.valid('json')
  const agent = await findOwnAgent(c.var.services.db, c.var.user.id, agentId)
  await requirePaidAccess(c.var.services, agent.userId)
  try {
    const result = await (await agentGateway(c.var.services, agent)).diagnostic(command)
    log.info('debug.command', { agentId: agent.id, command, exitCode: result.exitCode, durationMs: result.durationMs })
    return c.json(
      {
        command,
        output: typeof result.output === 'string' ? result.output.slice(0, 1_000_000) : '',
        exitCode: Number.isInteger(result.exitCode) ? result.exitCode : -1,
        duration: Math.max(0, Math.round(Number(result.durationMs) || 0)),
        timestamp: new Date().toISOString(),
      },
      200,
    )
  } catch (e) {
    log.warn('debug.command_failed', { agentId: agent.id, command, ...errorFields(e) })
    throw e instanceof RuntimeProviderError ? providerApiError(e) : e
  }
}
