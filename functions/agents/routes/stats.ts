import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { findOwnAgent } from '../../../lib/agents/access'
import { recordStatus } from '../../../lib/agents/provision'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { type ProbeResult, PROBE_PATHS, probeRuntime, RUNTIME_STATUSES } from '../../../lib/runtime/probe'
import { agentRoute } from '../route'
import { AgentIdParams, NOT_FOUND } from '../../../lib/agents/schemas'

// A probe's `lastSeenAt` is written at most this often for an agent already `running` (a dashboard polls stats).
const LAST_SEEN_EVERY_MS = 60_000

const ProbeCheck = z
  .object({
    path: z.enum(PROBE_PATHS),
    ok: z.boolean(),
    status: z.number().int().min(100).max(599).nullable().openapi({ format: 'int32' }),
    reason: z.string().max(200).nullable(),
  })
  .openapi('AgentProbeCheck')

const Stats = z
  .object({
    agentId: z.string().max(255),
    status: z.enum(RUNTIME_STATUSES).openapi({ description: 'The probed status (spec "Agent runtime status classification")' }),
    statusReason: z.string().max(500).nullable(),
    health: z.string().max(32).openapi({ description: '`healthy` for running or healthy, else the probed status' }),
    probeChecks: z.array(ProbeCheck).max(3),
    runtimeVersion: z.string().max(100),
    ffmpegAvailable: z.boolean(),
    ffmpegVersion: z.string().max(100).nullable(),
    uptime: z.string().max(100).nullable(),
    startedAt: z.string().max(64).nullable().openapi({ format: 'date-time' }),
    agentStatus: z.string().max(32).openapi({ description: "The agent's stored status after this probe" }),
    checkedAt: z.string().max(64).openapi({ format: 'date-time' }),
  })
  .openapi('AgentStats')

export const route = agentRoute({
  method: 'get',
  path: '/api/agents/{id}/stats',
  operationId: 'getAgentStats',
  tags: ['Agents'],
  summary: 'Probe the agent’s runtime',
  description:
    "Probes the runtime's `/healthz` (5 s), `/readyz` (4 s) and `/api/status` (5 s) in parallel and classifies the answers " +
    '(`/api/status` is authoritative). An agent stored as `starting` that probes `running` or `healthy` is stored as ' +
    '`running` (with `lastSeenAt`). An agent without a runtime URL is `unreachable` without a probe. `runtimeVersion` ' +
    "falls back to the tag of the agent's image.",
  request: { params: AgentIdParams },
  responses: { 200: ok(Stats), 404: errorResponse(NOT_FOUND) },
})

const imageTag = (image: string | null) => (image?.includes(':') ? image.slice(image.lastIndexOf(':') + 1) : 'unknown')

export const handler: RouteHandler<typeof route> = async (c) => {
  const { services } = c.var
  let agent = await findOwnAgent(services.db, c.var.user.id, c.req.valid('param').id)
  const probe: ProbeResult = agent.runtimeUrl
    ? await probeRuntime(agent.runtimeUrl)
    : { status: 'unreachable', statusReason: 'The agent has no runtime', probeChecks: [], runtimeVersion: null, ffmpegAvailable: false, ffmpegVersion: null, uptime: null, startedAt: null }
  const alive = probe.status === 'running' || probe.status === 'healthy'
  const stale = !agent.lastSeenAt || Date.now() - agent.lastSeenAt.getTime() > LAST_SEEN_EVERY_MS
  if (alive && (agent.status === 'starting' || (agent.status === 'running' && stale))) {
    agent = await recordStatus(services, agent, 'running', null, { lastSeenAt: new Date() })
  }
  return c.json(
    {
      agentId: agent.id,
      status: probe.status,
      statusReason: probe.statusReason,
      health: alive ? 'healthy' : probe.status,
      probeChecks: probe.probeChecks,
      runtimeVersion: probe.runtimeVersion ?? imageTag(agent.image),
      ffmpegAvailable: probe.ffmpegAvailable,
      ffmpegVersion: probe.ffmpegVersion,
      uptime: probe.uptime,
      startedAt: probe.startedAt,
      agentStatus: agent.status,
      checkedAt: new Date().toISOString(),
    },
    200,
  )
}
