import { and, asc, desc, eq, getTableColumns, ilike, inArray, or, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../../lib/db/rls'
import { asService, withUser } from '../../lib/db/rls'
import { ApiError } from '../../lib/http/errors'
import { skillInstallations, skillRatings, skills } from '../../schema'
import { averageRating, type CatalogRow } from './skill-json'
import { isPlatformSkill, PLATFORM_SKILLS, platformSkillRow } from './catalog'
import { skillBlocked } from './errors'
import { scanSkill } from './scan/index'
import { type Scan, TRUSTED_SCAN } from './scan/object'

export const skillNotFound = () => new ApiError('NOT_FOUND', 'Skill not found')

/** Enabled installations of each skill, across every user: a count, never whose. */
// Qualified by hand: drizzle writes a bare column name inside `sql`, which the subquery would read as its own.
const installs = sql<number>`(select count(*)::int from ${skillInstallations} where ${skillInstallations}.skill_id = ${skills}.id and ${skillInstallations}.enabled)`
const catalogColumns = { ...getTableColumns(skills), installs }

export interface CatalogFilter {
  /** A category, lower-cased; undefined for every category. */
  category?: string
  featuredOnly: boolean
  search?: string
  limit: number
  offset: number
}

/** `%term%` for ILIKE, its own `%`, `_` and `\` matched literally. */
const contains = (term: string) => `%${term.replace(/[\\%_]/g, '\\$&')}%`

function filters(f: Omit<CatalogFilter, 'limit' | 'offset'>): SQL | undefined {
  const search = f.search ? contains(f.search) : undefined
  return and(
    f.category ? eq(skills.category, f.category) : undefined,
    f.featuredOnly ? eq(skills.featured, true) : undefined,
    search ? or(ilike(skills.name, search), ilike(skills.description, search)) : undefined,
  )
}

/** At most this many skills in `featured[]`. */
export const MAX_FEATURED = 50

/**
 * One read of the catalog as the service (anonymous callers read it too; install counts span users): the page of
 * skills, the featured ones under the same category and search, and the categories in use. The platform's own
 * skills are written in the first time they are found missing, so every catalog has them.
 */
export async function readCatalog(db: Db, f: CatalogFilter): Promise<{ page: CatalogRow[]; featured: CatalogRow[]; categories: string[] }> {
  return asService(db, 'skillCatalog', async (tx) => {
    const present = await tx.select({ id: skills.id }).from(skills).where(inArray(skills.id, PLATFORM_SKILLS.map((s) => s.id)))
    if (present.length < PLATFORM_SKILLS.length) {
      await tx.insert(skills).values(PLATFORM_SKILLS.map(platformSkillRow)).onConflictDoNothing()
    }
    const order = [desc(skills.featured), desc(skills.downloads), asc(skills.nameKey), asc(skills.id)]
    const page = await tx.select(catalogColumns).from(skills).where(filters(f)).orderBy(...order).limit(f.limit).offset(f.offset)
    const featured = await tx
      .select(catalogColumns)
      .from(skills)
      .where(filters({ ...f, featuredOnly: true }))
      .orderBy(...order)
      .limit(MAX_FEATURED)
    const categories = await tx.selectDistinct({ category: skills.category }).from(skills)
    return { page, featured, categories: categories.map((c) => c.category) }
  })
}

/** The caller's ratings of `skillIds`, by skill id. */
export async function ratingsOf(db: Db, userId: string, skillIds: string[]): Promise<Map<string, number>> {
  if (!skillIds.length) return new Map()
  const rows = await withUser(db, userId, (tx) =>
    tx
      .select({ skillId: skillRatings.skillId, rating: skillRatings.rating })
      .from(skillRatings)
      .where(and(eq(skillRatings.userId, userId), inArray(skillRatings.skillId, skillIds))),
  )
  return new Map(rows.map((r) => [r.skillId, r.rating]))
}

/**
 * Writes one of the platform's skills into the catalog when it is missing (a database no catalog read has seen
 * yet); true when `skillId` is one. The catalog read writes them all the same way.
 */
async function ensurePlatformSkill(tx: Db, skillId: string): Promise<boolean> {
  const skill = PLATFORM_SKILLS.find((s) => s.id === skillId)
  if (!skill) return false
  await tx.insert(skills).values(platformSkillRow(skill)).onConflictDoNothing()
  return true
}

/** One skill with its install count, or 404 `Skill not found`. */
export async function findSkill(db: Db, skillId: string): Promise<CatalogRow> {
  const [row] = await asService(db, 'skillCatalog', async (tx) => {
    const select = () => tx.select(catalogColumns).from(skills).where(eq(skills.id, skillId)).limit(1)
    const found = await select()
    return found.length || !(await ensurePlatformSkill(tx, skillId)) ? found : select()
  })
  if (!row) throw skillNotFound()
  return row
}

/**
 * Adds one to the skill's downloads (only through functions/skills/downloads.ts, once per user per skill per UTC day);
 * best effort, so a failure is the caller's to log, not to answer.
 */
export async function countDownload(db: Db, skillId: string) {
  await asService(db, 'skillCounters', (tx) => tx.update(skills).set({ downloads: sql`${skills.downloads} + 1` }).where(eq(skills.id, skillId)))
}

/**
 * Records `userId`'s rating of a skill (a second rating replaces the first) and moves the skill's sum and count
 * by the difference, in one transaction that first locks the skill's row: concurrent ratings of one skill run one
 * after another, so the counters always equal the ratings stored. 404 when the skill does not exist.
 */
export async function rateSkill(db: Db, userId: string, skillId: string, rating: number) {
  return asService(db, 'skillCounters', async (tx) => {
    const lock = () => tx.select({ id: skills.id }).from(skills).where(eq(skills.id, skillId)).for('update')
    let [locked] = await lock()
    if (!locked && (await ensurePlatformSkill(tx, skillId))) [locked] = await lock()
    if (!locked) throw skillNotFound()
    const [old] = await tx
      .select({ rating: skillRatings.rating })
      .from(skillRatings)
      .where(and(eq(skillRatings.skillId, skillId), eq(skillRatings.userId, userId)))
    await tx
      .insert(skillRatings)
      .values({ skillId, userId, rating })
      .onConflictDoUpdate({ target: [skillRatings.skillId, skillRatings.userId], set: { rating, updatedAt: new Date() } })
    const [counters] = await tx
      .update(skills)
      .set({
        ratingSum: sql`${skills.ratingSum} + ${rating - (old?.rating ?? 0)}`,
        ratingCount: sql`${skills.ratingCount} + ${old ? 0 : 1}`,
      })
      .where(eq(skills.id, skillId))
      .returning({ sum: skills.ratingSum, count: skills.ratingCount })
    return { rating: averageRating(counters.sum, counters.count), ratingCount: counters.count }
  })
}

/**
 * An admin's review (0-decisions: a skill is `verified` only after one): the stored code is scanned again, so
 * what the admin approves is what installs; a blocked skill stays refused (400 `SKILL_BLOCKED`). The review is
 * recorded in the stored scan (`reviewedBy`, `reviewedAt`): `publicScan` shows `verified` only with it.
 */
export async function reviewSkill(db: Db, skillId: string, adminId: string): Promise<Scan> {
  const skill = await findSkill(db, skillId)
  if (isPlatformSkill(skill.id)) return TRUSTED_SCAN
  const found = scanSkill(skill)
  if (!found.installAllowed) throw skillBlocked(found)
  const scan: Scan = { ...found, trustTier: 'verified', requiresManualReview: false }
  await asService(db, 'skillReview', (tx) =>
    tx
      .update(skills)
      .set({ scan: { ...scan, reviewedBy: adminId, reviewedAt: new Date().toISOString() }, updatedAt: new Date() })
      .where(eq(skills.id, skillId)),
  )
  return scan
}
