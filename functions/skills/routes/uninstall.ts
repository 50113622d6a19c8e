import type { RouteHandler } from '@hono/zod-openapi'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { log } from '../../../lib/log'
import { deploySkills, requireTargetAgent, uninstallSkill } from '../install'
import { skillRoute } from '../route'
import { InstallBody, UninstallResultSchema } from '../schemas'

export const route = skillRoute(limits.skillInstall, {
  method: 'post',
  path: '/api/skills/uninstall',
  operationId: 'uninstallSkill',
  tags: ['Skills'],
  summary: 'Remove a skill from one of the caller’s agents',
  description:
    '`agentId` as for install. The installation is removed (enabled or disabled); `success` is true even when there was ' +
    'none (`message` says so), and the skill need not exist any more. Then the agent’s remaining enabled skills are ' +
    'pushed to its runtime: `runtimeHydrated` false when it has no runtime or refused; the removal stands either way.',
  request: { body: jsonBody(InstallBody.openapi('SkillUninstallRequest')) },
  responses: {
    200: ok(UninstallResultSchema),
    400: errorResponse('`skillId and agentId are required` (`VALIDATION`); or invalid JSON (`INVALID_JSON`)'),
    404: errorResponse('`Agent not found`: not one of the caller’s agents by any of its ids (`NOT_FOUND`)'),
    500: errorResponse('Unexpected failure (`INTERNAL`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { skillId, agentId } = c.req.valid('json')
  const { services } = c.var
  const agent = await requireTargetAgent(services.db, c.var.user.id, agentId)
  const removed = await uninstallSkill(services.db, agent, skillId)
  const { deployed } = await deploySkills(services, agent)
  log.info('skills.uninstalled', { agentId: agent.id, skillId, removed, synced: deployed })
  return c.json({ success: true as const, runtimeHydrated: deployed, message: removed ? 'Skill uninstalled' : 'Skill was not installed' }, 200)
}
