import { and, eq } from 'drizzle-orm'
import type { Services } from '../../lib/context'
import { withUser } from '../../lib/db/rls'
import { errorFields, log } from '../../lib/log'
import { skillInstallations } from '../../schema'
import { CATEGORIES, PLATFORM_SKILLS, platformSkillRow } from './catalog'
import { findTargetAgent } from './install'
import { type CatalogFilter, ratingsOf, readCatalog } from './queries'
import { type CatalogRow, skillJson, type SkillJson } from './skill-json'

export interface Catalog {
  skills: SkillJson[]
  categories: string[]
  featured: SkillJson[]
  installedSkillIds: string[]
}

/** The spec's categories in their order, then every other category in use, sorted. */
const categoriesWith = (inUse: string[]) => [...CATEGORIES, ...[...new Set(inUse)].filter((c) => !(CATEGORIES as readonly string[]).includes(c)).sort()]

/**
 * `GET /api/skills`: the catalog page, the featured skills and the categories as the service reads them; with a
 * session, the caller's own ratings and the skills enabled on `agentId` (one of the caller's agents, by any of its
 * ids; another's reads as none). When the database cannot be read, the default catalog: the platform's skills,
 * filtered the same way, with counters and ratings 0 and no caller data.
 */
export async function catalogFor(services: Pick<Services, 'db'>, userId: string | null, f: CatalogFilter, agentId?: string): Promise<Catalog> {
  let read: Awaited<ReturnType<typeof readCatalog>>
  try {
    read = await readCatalog(services.db, f)
  } catch (e) {
    log.warn('skills.catalog_default', errorFields(e))
    return defaultCatalog(f)
  }
  const [ratings, installedSkillIds] = userId
    ? await Promise.all([ratingsOf(services.db, userId, [...new Set([...read.page, ...read.featured].map((r) => r.id))]), installedOn(services, userId, agentId)])
    : [new Map<string, number>(), []]
  const json = (row: CatalogRow) => skillJson(row, ratings.get(row.id) ?? null)
  return { skills: read.page.map(json), categories: categoriesWith(read.categories), featured: read.featured.map(json), installedSkillIds }
}

/** The skills enabled on the caller's agent `agentId`; none without one, or when it is not the caller's. */
async function installedOn(services: Pick<Services, 'db'>, userId: string, agentId: string | undefined): Promise<string[]> {
  if (!agentId) return []
  const agent = await findTargetAgent(services.db, userId, agentId)
  if (!agent) return []
  const rows = await withUser(services.db, userId, (tx) =>
    tx
      .select({ skillId: skillInstallations.skillId })
      .from(skillInstallations)
      .where(and(eq(skillInstallations.agentId, agent.id), eq(skillInstallations.enabled, true))),
  )
  return rows.map((r) => r.skillId)
}

/** The catalog from the platform's skills alone, as when the database is unreachable. */
export function defaultCatalog(f: CatalogFilter): Catalog {
  const term = f.search?.toLowerCase()
  const matching = PLATFORM_SKILLS.map((s) => ({ ...platformSkillRow(s), downloads: 0, ratingSum: 0, ratingCount: 0, installs: 0 }))
    .filter((s) => (!f.category || s.category === f.category) && (!term || s.name.toLowerCase().includes(term) || s.description.toLowerCase().includes(term)))
    // the database's order: featured first, then by name (every download count is 0 here)
    .sort((a, b) => Number(b.featured) - Number(a.featured) || a.nameKey.localeCompare(b.nameKey))
  const json = (row: CatalogRow) => skillJson(row, null)
  const featured = matching.filter((s) => s.featured)
  const page = (f.featuredOnly ? featured : matching).slice(f.offset, f.offset + f.limit)
  return { skills: page.map(json), categories: [...CATEGORIES], featured: featured.map(json), installedSkillIds: [] }
}
