import type { RouteHandler } from '@hono/zod-openapi'
import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC, requirePaidAccess } from '../../../lib/auth/plan'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { errorFields, log } from '../../../lib/log'
import { isPlatformSkill } from '../catalog'
import { installFailed, skillBlocked } from '../errors'
import { deploySkills, installSkill, MAX_SKILLS_PER_AGENT, requireTargetAgent } from '../install'
import { findSkill } from '../queries'
import { scanSkill } from '../scan/index'
import { TRUSTED_SCAN } from '../scan/object'
import { skillRoute } from '../route'
import { BlockedSchema, ExactErrorSchema, InstallBody, InstallResultSchema } from '../schemas'

const MESSAGES = {
  installed: 'Skill installed',
  already_installed: 'Skill already installed',
  re_enabled: 'Skill re-enabled',
} as const

export const route = skillRoute(limits.skillInstall, {
  method: 'post',
  path: '/api/skills/install',
  operationId: 'installSkill',
  tags: ['Skills'],
  summary: 'Install a skill on one of the caller’s agents',
  description:
    '`agentId` is one of the caller’s agents: its id, its runtime’s service id, or the caller’s instance id (their user ' +
    'id), which names their instance agent (the agent record made when the managed runtime was provisioned); when the ' +
    'caller has no such record, the backing agent `Managed OpenClaw Runtime` (model `openclaw`, status `running`) is ' +
    'made, once however many installs race, and it counts against the plan’s agents like any other (429 `AGENT_LIMIT` ' +
    `when the plan is full). Installing needs paid access at the moment of use (${PAID_ACCESS_RULE}): 402 otherwise, ` +
    'checked first. The skill is scanned again (the platform’s own are ' +
    '`trusted`); a blocked one is refused. Always 200 on success (spec state table): a new installation is stored ' +
    'enabled; installing an enabled one again changes nothing (`alreadyInstalled: true`); a disabled one is enabled ' +
    'again (`message` `Skill re-enabled`). Concurrent installs of one skill store one installation and all succeed: ' +
    'the duplicate-key race the spec answers 409 `already_installed` is answered as this success. Then every enabled ' +
    'skill of the agent is pushed to its runtime in one sync (`POST /api/agents/{id}/sync`’s): `deployed` and ' +
    '`runtimeHydrated` true when the runtime accepted it; false with `deployWarning` when the agent has no runtime yet ' +
    `or it refused (the installation stays). An agent holds at most ${MAX_SKILLS_PER_AGENT} skills.`,
  request: { body: jsonBody(InstallBody) },
  responses: {
    200: ok(InstallResultSchema),
    400: {
      description:
        '`skillId and agentId are required` (`VALIDATION`); invalid JSON (`INVALID_JSON`); `Skill blocked by the safety scan` ' +
        `with \`scan\` (\`SKILL_BLOCKED\`); or the agent already holds ${MAX_SKILLS_PER_AGENT} skills (\`SKILL_LIMIT\`, with \`limit\`)`,
      content: { 'application/json': { schema: BlockedSchema } },
    },
    402: errorResponse(PLAN_REQUIRED_DOC),
    404: errorResponse('`Agent not found`: not one of the caller’s agents by any of its ids; or `Skill not found` (`NOT_FOUND`)'),
    429: errorResponse('Making the backing agent: the plan’s agent count is reached (`AGENT_LIMIT`, with `limit` and `plan`)'),
    500: {
      description: '`install_failed`: the installation could not be stored, nothing changed (`INSTALL_FAILED`, with `message`)',
      content: { 'application/json': { schema: ExactErrorSchema } },
    },
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { skillId, agentId } = c.req.valid('json')
  const { services } = c.var
  // A use of the agent (and maybe the making of one): paid access first, before any other work.
  const { plan } = await requirePaidAccess(services, c.var.user.id)
  const agent = await requireTargetAgent(services.db, c.var.user.id, agentId, { backingPlan: plan })
  const skill = await findSkill(services.db, skillId)
  const scan = isPlatformSkill(skill.id) ? TRUSTED_SCAN : scanSkill(skill)
  if (!scan.installAllowed) throw skillBlocked({ ...scan })
  let result: Awaited<ReturnType<typeof installSkill>>
  try {
    result = await installSkill(services.db, agent, skill.id)
  } catch (e) {
    if (e instanceof ApiError) throw e
    log.error('skills.install_failed', { agentId: agent.id, skillId: skill.id, ...errorFields(e) })
    throw installFailed()
  }
  const { deployed, deployWarning } = await deploySkills(services, agent)
  log.info('skills.installed', { agentId: agent.id, skillId: skill.id, state: result.state, deployed })
  return c.json(
    {
      success: true as const,
      installed: result.installed,
      alreadyInstalled: result.state === 'already_installed',
      runtimeHydrated: deployed,
      deployed,
      deployWarning,
      message: MESSAGES[result.state],
    },
    200,
  )
}
