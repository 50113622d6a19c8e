import { z } from '@hono/zod-openapi'
import { ErrorSchema } from '../../lib/http/openapi'
import { MAX_FEATURED } from './queries'
import { RISK_LEVELS, TRUST_TIERS } from './scan/object'
import { CATEGORIES } from './catalog'
import { SKILL_MANIFEST_SCHEMA } from '../../lib/skills/manifest'

/** Spec 2 "Limits": skill fields. */
export const SKILL_LIMITS = { name: 80, description: 600, category: 40, code: 2000, sourceUrl: 300 } as const
/** The most skills one catalog page answers, and the default page size. */
export const MAX_PAGE = 200
export const DEFAULT_PAGE = 100

const iso = () => z.string().max(64).openapi({ format: 'date-time' })
const id = (description: string) => z.string().max(255).openapi({ description })
/** A JSON object or null (`mcpConfig`, `widgetConfig`): the document's type says both, as the answers do. */
const jsonObject = z.record(z.string().max(200), z.unknown()).nullable().openapi({ type: ['object', 'null'], maxProperties: 100 })

export const ScanSchema = z
  .object({
    trustTier: z.enum(TRUST_TIERS).openapi({ description: '`trusted` only for the platform’s own skills; never from a scan of submitted code' }),
    riskLevel: z.enum(RISK_LEVELS),
    installAllowed: z.boolean().openapi({ description: 'False only when blocked' }),
    reasons: z.array(z.string().max(300)).max(100).openapi({ description: 'Why it is blocked; empty unless blocked' }),
    warnings: z.array(z.string().max(300)).max(100).openapi({ description: 'What to know before installing (informational)' }),
    requiresManualReview: z.boolean().openapi({ description: 'True when warnings call for a person to read the code before installing' }),
  })
  .openapi('SkillScan', {
    description:
      'The safety scan: static analysis, nothing fetched or run; what it cannot resolve (a module or global it cannot ' +
      'name) is blocked. Any reason → `blocked` (risk `blocked`, not installable). Warnings → `review`, risk `high` when ' +
      'one is high, else `medium`; manual review required. Nothing found → `review`, risk `low`. `verified` only after ' +
      'an admin’s review (`POST /api/skills/verify` with `skillId`), never from `sourceUrl`.',
  })

export const SkillSchema = z
  .object({
    id: id('The skill id'),
    name: z.string().max(SKILL_LIMITS.name),
    description: z.string().max(SKILL_LIMITS.description),
    category: z.string().max(SKILL_LIMITS.category).openapi({ description: `One of ${CATEGORIES.join(', ')}, or a creator’s own` }),
    author: z.string().max(256).nullable().openapi({ description: 'The creator’s name; `Platform` for the platform’s skills' }),
    code: z.string().max(SKILL_LIMITS.code).nullable(),
    featured: z.boolean(),
    downloads: z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32', description: 'Cumulative downloads' }),
    rating: z.number().min(0).max(5).openapi({ format: 'float', description: 'Average rating to one decimal; 0 when unrated' }),
    ratingCount: z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32' }),
    installs: z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32', description: 'Installations enabled now, across every user' }),
    userRating: z.number().int().min(1).max(5).nullable().openapi({ format: 'int32', description: 'The caller’s rating; null when none or without a session' }),
    hasDownload: z.boolean().openapi({ description: 'Whether `GET /api/skills/{skillId}/download` has something to answer (code, MCP server or widget)' }),
    mcpEnabled: z.boolean(),
    mcpConfig: jsonObject,
    widgetUrl: z.string().max(2048).nullable(),
    widgetConfig: jsonObject,
    scan: ScanSchema,
    createdAt: iso(),
    updatedAt: iso(),
  })
  .openapi('Skill')

export const CatalogQuery = z.object({
  category: z.string().max(SKILL_LIMITS.category).optional().openapi({ description: '`all` or absent for every category' }),
  featured: z.enum(['true', 'false'], { error: 'featured must be true or false' }).optional().openapi({ description: '`true`: featured skills only; `false` or absent: all' }),
  search: z.string().max(100, 'search must be at most 100 characters').optional().openapi({ description: 'Case-insensitive, in the name or the description' }),
  agentId: z.string().max(255).optional().openapi({ description: 'The caller’s agent (database agent id, runtime service id or instance id) whose installed skills `installedSkillIds` lists' }),
  limit: z.coerce.number({ error: `limit must be an integer from 1 to ${MAX_PAGE}` }).int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE).openapi({ type: 'integer', format: 'int32', minimum: 1, maximum: MAX_PAGE, description: `Skills per page (default ${DEFAULT_PAGE}, at most ${MAX_PAGE})` }),
  offset: z.coerce.number({ error: 'offset must be an integer from 0 to 100000' }).int().min(0).max(100_000).default(0).openapi({ type: 'integer', format: 'int32', minimum: 0, maximum: 100_000, description: 'Skills to skip (default 0)' }),
})

export const CatalogSchema = z
  .object({
    skills: z.array(SkillSchema).max(MAX_PAGE),
    categories: z.array(z.string().max(SKILL_LIMITS.category)).max(1000).openapi({ description: 'The spec’s categories in order, then any other category in use' }),
    featured: z.array(SkillSchema).max(MAX_FEATURED).openapi({ description: `The featured skills under the same \`category\` and \`search\` (at most ${MAX_FEATURED}, not paged)` }),
    installedSkillIds: z.array(z.string().max(255)).max(1000).openapi({ description: 'Skills enabled on `agentId`; empty without a session or `agentId`' }),
  })
  .openapi('SkillCatalog')

const name = z
  .string({ error: 'name is required' })
  .trim()
  .min(1, 'name is required')
  .max(SKILL_LIMITS.name, `name must be at most ${SKILL_LIMITS.name} characters`)
  .regex(/^\P{Cc}*$/u, 'name must not contain control characters')
const description = z
  .string({ error: 'description is required' })
  .trim()
  .min(1, 'description is required')
  .max(SKILL_LIMITS.description, `description must be at most ${SKILL_LIMITS.description} characters`)
const code = z.string({ error: 'code must be a string' }).max(SKILL_LIMITS.code, `code must be at most ${SKILL_LIMITS.code} characters`)
const sourceUrl = z.string({ error: 'sourceUrl must be a string' }).trim().max(SKILL_LIMITS.sourceUrl, `sourceUrl must be at most ${SKILL_LIMITS.sourceUrl} characters`)

export const CreateSkillBody = z
  .object(
    {
      name,
      description,
      category: z
        .string({ error: 'category must be a string' })
        .trim()
        .toLowerCase()
        .min(1, 'category must not be empty')
        .max(SKILL_LIMITS.category, `category must be at most ${SKILL_LIMITS.category} characters`)
        .regex(/^[a-z0-9][a-z0-9 _-]*$/, 'category may hold letters, digits, spaces, - and _')
        .default('custom')
        .openapi({ description: `Default \`custom\`; stored lower-cased. The spec’s: ${CATEGORIES.join(', ')}` }),
      code: code.optional(),
      sourceUrl: sourceUrl
        .refine((s) => s === '' || URL.canParse(s), 'sourceUrl must be a URL')
        .optional()
        .openapi({ format: 'uri', description: 'Where the code is published, for readers; it never raises the tier' }),
    },
    { error: 'Request body must be a JSON object' },
  )
  .openapi('CreateSkill')

export const CreatedSkillSchema = z.object({ skill: SkillSchema, scan: ScanSchema }).openapi('CreatedSkill')

export const VerifyBody = z
  .object(
    {
      name: name.optional().openapi({ description: 'Required unless `skillId` is given' }),
      skillId: z.string({ error: 'skillId must be a string' }).min(1).max(255, 'Skill not found').optional().openapi({
        description: 'An admin’s review of this stored skill: its code is scanned again and, unless blocked, it becomes `verified`',
      }),
      description: z.string({ error: 'description must be a string' }).max(SKILL_LIMITS.description, `description must be at most ${SKILL_LIMITS.description} characters`).optional(),
      code: code.optional(),
      author: z.string({ error: 'author must be a string' }).max(256).optional().openapi({ description: 'Accepted; it never raises the tier' }),
      featured: z.boolean({ error: 'featured must be a boolean' }).optional().openapi({ description: 'Accepted; it never raises the tier' }),
      sourceUrl: sourceUrl.optional(),
    },
    { error: 'Request body must be a JSON object' },
  )
  .refine((b) => b.skillId !== undefined || b.name !== undefined, { message: 'name is required', path: ['name'] })
  .openapi('VerifySkill')

export const InstallBody = z
  .object(
    {
      skillId: z.string({ error: 'skillId and agentId are required' }).min(1, 'skillId and agentId are required').max(255, 'Skill not found'),
      agentId: z.string({ error: 'skillId and agentId are required' }).min(1, 'skillId and agentId are required').max(255, 'Agent not found').openapi({
        description: 'The caller’s agent: its database id, its runtime’s service id, or the caller’s instance id (their user id: the instance agent)',
      }),
    },
    { error: 'skillId and agentId are required' },
  )
  .openapi('SkillInstallRequest')

export const InstalledSchema = z
  .object({ id: id('The installation id'), skillId: id('The skill'), agentId: id('The database agent it is installed on'), installedAt: iso() })
  .openapi('SkillInstallation')

export const InstallResultSchema = z
  .object({
    success: z.literal(true),
    installed: InstalledSchema,
    alreadyInstalled: z.boolean(),
    runtimeHydrated: z.boolean().openapi({ description: 'The runtime now holds the agent’s enabled skills (one sync of all of them succeeded)' }),
    deployed: z.boolean().openapi({ description: 'The runtime accepted the skill; false: saved, not on the runtime yet (use `POST /api/agents/{id}/sync`)' }),
    deployWarning: z.string().max(300).nullable().openapi({ description: 'Why it is not deployed; null when deployed' }),
    message: z.string().max(300),
  })
  .openapi('SkillInstallResult')

export const UninstallResultSchema = z
  .object({
    success: z.literal(true),
    runtimeHydrated: z.boolean().openapi({ description: 'The runtime was synced with the agent’s remaining enabled skills' }),
    message: z.string().max(300),
  })
  .openapi('SkillUninstallResult')

export const SkillIdParams = z.object({
  skillId: z.string().max(255).openapi({ param: { name: 'skillId', in: 'path' }, description: 'The skill id' }),
})

export const RatingBody = z
  .object(
    {
      rating: z
        .number({ error: 'rating must be an integer from 1 to 5' })
        .int('rating must be an integer from 1 to 5')
        .min(1, 'rating must be an integer from 1 to 5')
        .max(5, 'rating must be an integer from 1 to 5')
        .openapi({ format: 'int32' }),
    },
    { error: 'rating must be an integer from 1 to 5' },
  )
  .openapi('SkillRatingRequest')

export const RatingResultSchema = z
  .object({
    success: z.literal(true),
    skillId: id('The skill'),
    userRating: z.number().int().min(1).max(5).openapi({ format: 'int32' }),
    rating: z.number().min(0).max(5).openapi({ format: 'float', description: 'The new average, to one decimal' }),
    ratingCount: z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32' }),
  })
  .openapi('SkillRatingResult')

export const ManifestSchema = z
  .object({
    schema: z.literal(SKILL_MANIFEST_SCHEMA),
    exportedAt: iso(),
    skill: z.object({
      id: id('The skill id'),
      name: z.string().max(SKILL_LIMITS.name),
      description: z.string().max(SKILL_LIMITS.description),
      category: z.string().max(SKILL_LIMITS.category),
      author: z.string().max(256).nullable(),
      code: z.string().max(SKILL_LIMITS.code).nullable(),
      mcpEnabled: z.boolean(),
      mcpConfig: jsonObject,
      widgetUrl: z.string().max(2048).nullable(),
      widgetConfig: jsonObject,
    }),
  })
  .openapi('SkillManifest')

/** The 400 of a skill the scan blocks: the error and the scan that blocked it. */
export const BlockedSchema = ErrorSchema.extend({ scan: ScanSchema.optional() }).openapi('SkillBlockedError', {
  description: 'An error; when the safety scan blocked the skill (`SKILL_BLOCKED`), `scan` says why',
})

/** The exact-code errors of install (spec 2: `install_failed`): `error` is the code, `message` says it in words. */
export const ExactErrorSchema = ErrorSchema.extend({ message: z.string().max(300).optional() }).openapi('SkillExactError')
