import type { skills } from '../../schema'

/** A `skills` row. */
export type SkillRow = typeof skills.$inferSelect

/** The skill manifest's schema identifier (spec 2 "Versioning"). */
export const SKILL_MANIFEST_SCHEMA = 'service.skill.v1' as const

export type ManifestSource = Pick<SkillRow, 'id' | 'name' | 'description' | 'category' | 'author' | 'code' | 'mcpEnabled' | 'mcpConfig' | 'widgetUrl' | 'widgetConfig'>

/**
 * A skill as a `service.skill.v1` manifest: what `GET /api/skills/{id}/download` answers and what agent sync pushes
 * to a runtime for each installed skill, so the two never differ.
 */
export const skillManifest = (s: ManifestSource, exportedAt = new Date()) => ({
  schema: SKILL_MANIFEST_SCHEMA,
  exportedAt: exportedAt.toISOString(),
  skill: {
    id: s.id,
    name: s.name,
    description: s.description,
    category: s.category,
    author: s.author,
    code: s.code,
    mcpEnabled: s.mcpEnabled,
    mcpConfig: s.mcpConfig,
    widgetUrl: s.widgetUrl,
    widgetConfig: s.widgetConfig,
  },
})

export type SkillManifest = ReturnType<typeof skillManifest>

/** Whether a skill has something to download: code, an MCP server, a widget URL or a widget configuration. */
export const hasDownload = (s: Pick<SkillRow, 'code' | 'mcpConfig' | 'widgetUrl' | 'widgetConfig'>) =>
  Boolean(s.code?.trim() || s.mcpConfig || s.widgetUrl?.trim() || s.widgetConfig)

export const SLUG_FALLBACK = 'service-skill'

/** The download's file name stem: lower case, each run of non-alphanumerics one `-`, trimmed of `-`, at most 80. */
export function skillSlug(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '')
  return slug || SLUG_FALLBACK
}

/** `Content-Disposition` of a skill's download. */
export const downloadDisposition = (name: string) => `attachment; filename=${skillSlug(name)}.service-skill.json`
