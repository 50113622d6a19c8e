import type { RouteHandler } from '@hono/zod-openapi'
import { ApiError } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse } from '../../../lib/http/openapi'
import { errorFields, log } from '../../../lib/log'
import { downloadDisposition, hasDownload, skillManifest } from '../../../lib/skills/manifest'
import { countDailyDownload } from '../downloads'
import { findSkill } from '../queries'
import { skillRoute } from '../route'
import { ManifestSchema, SkillIdParams } from '../schemas'

export const route = skillRoute(limits.skillDownload, {
  method: 'get',
  path: '/api/skills/{skillId}/download',
  operationId: 'downloadSkill',
  tags: ['Skills'],
  summary: 'Download a skill as a `service.skill.v1` manifest',
  description:
    'A JSON attachment named `<slug>.service-skill.json`, the slug being the name lower-cased, each run of other ' +
    'characters than a-z and 0-9 one `-`, trimmed of `-`, at most 80 characters, `service-skill` when nothing is left. ' +
    'A user’s first download of a skill in a UTC day adds one to the skill’s `downloads` (which ranks the catalog); ' +
    'their other downloads of it that day are served but not counted, so one account cannot raise a skill’s rank ' +
    'by downloading it again (two users count twice; the next UTC day counts again). Best effort: a failed count ' +
    'does not fail the download. A ' +
    'skill with nothing to download (no code, MCP server, widget URL or widget configuration) is 404.',
  request: { params: SkillIdParams },
  responses: {
    200: {
      description: 'The manifest',
      headers: {
        'Content-Disposition': { description: '`attachment; filename=<slug>.service-skill.json`', schema: { type: 'string', maxLength: 120 } },
        'Cache-Control': { description: '`no-store`', schema: { type: 'string', maxLength: 16 } },
      },
      // sent as `Content-Type: application/json; charset=utf-8`
      content: { 'application/json': { schema: ManifestSchema } },
    },
    404: errorResponse('`Skill not found`; or `Skill has nothing to download` (`NOT_FOUND`)'),
  },
})

export const handler: RouteHandler<typeof route> = async (c) => {
  const { services, user } = c.var
  const skill = await findSkill(services.db, c.req.valid('param').skillId)
  if (!hasDownload(skill)) throw new ApiError('NOT_FOUND', 'Skill has nothing to download')
  await countDailyDownload(services, skill.id, user.id).catch((e) => log.warn('skills.download_count_failed', { skillId: skill.id, ...errorFields(e) }))
  return c.json(skillManifest(skill), 200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Disposition': downloadDisposition(skill.name),
  })
}
