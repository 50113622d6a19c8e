import type { RouteHandler } from '@hono/zod-openapi'
import { asUser } from '../../../lib/db/rls'
import { limits } from '../../../lib/http/limits'
import { enforceRateLimit, limitedRoute } from '../../../lib/http/rate-limit'
import { signedInRoute } from '../../../lib/http/routes'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { jsonBody } from '../../../lib/http/validation'
import { isReservedName, nameKeyOf } from '../catalog'
import { duplicateName, skillBlocked } from '../errors'
import { scanSkill } from '../scan/index'
import { skillJson } from '../skill-json'
import { skills } from '../../../schema'
import { BlockedSchema, CreatedSkillSchema, CreateSkillBody } from '../schemas'

export const route = signedInRoute(
  limitedRoute(
    limits.skillCreate,
    {
      method: 'post',
      path: '/api/skills',
      operationId: 'createSkill',
      tags: ['Skills'],
      summary: 'Publish a skill to the catalog',
      description:
        'The caller is its author; ten creates per ten minutes, malformed requests not counted. Limits: `name` 80 (trimmed; unique without regard to case, and not one of the platform’s ' +
        'skill names), `description` 600, `category` 40 (default `custom`, stored lower-cased), `code` 2000, `sourceUrl` 300. ' +
        'The code is scanned first (see `SkillScan`): a blocked skill is refused and not stored. Of concurrent creates of ' +
        'one name exactly one succeeds. Answers 201 with the new skill and its scan (`featured` false, `mcpEnabled` false, ' +
        '`mcpConfig` null, `downloads` 0, `rating` 0).',
      request: { body: jsonBody(CreateSkillBody) },
      responses: {
        201: ok(CreatedSkillSchema, 'Created'),
        400: {
          description:
            'A field is missing or too long (`VALIDATION`); invalid JSON (`INVALID_JSON`); `A skill with this name already exists` ' +
            '(`SKILL_NAME_TAKEN`); or `Skill blocked by the safety scan` with `scan` (`SKILL_BLOCKED`)',
          content: { 'application/json': { schema: BlockedSchema } },
        },
        500: errorResponse('Unexpected failure (`INTERNAL`)'),
      },
    },
    'handler',
  ),
)

export const handler: RouteHandler<typeof route> = async (c) => {
  // Counted after validation: a malformed request costs the caller no create.
  await enforceRateLimit(c, limits.skillCreate)
  const body = c.req.valid('json')
  const me = c.var.user
  const code = body.code?.trim() ? body.code : null
  const sourceUrl = body.sourceUrl || null
  const scan = scanSkill({ code, description: body.description, sourceUrl })
  if (!scan.installAllowed) throw skillBlocked(scan)
  if (isReservedName(body.name)) throw duplicateName()
  const [row] = await asUser(c, (tx) =>
    tx
      .insert(skills)
      .values({
        name: body.name,
        nameKey: nameKeyOf(body.name),
        description: body.description,
        category: body.category,
        author: me.name.trim() || null,
        authorUserId: me.id,
        code,
        sourceUrl,
        scan: { ...scan },
      })
      // The unique name key decides between concurrent creates: the second finds the first's row and inserts nothing.
      .onConflictDoNothing({ target: skills.nameKey })
      .returning(),
  )
  if (!row) throw duplicateName()
  return c.json({ skill: skillJson({ ...row, installs: 0 }, null), scan }, 201)
}
