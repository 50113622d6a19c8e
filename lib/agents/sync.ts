import { and, asc, eq } from 'drizzle-orm'
import type { Services } from '../context'
import type { Db } from '../db/rls'
import { withUser } from '../db/rls'
import type { SyncPayload } from '../runtime/provider'
import { skillManifest } from '../skills/manifest'
import { skillInstallations, skills, type Agent } from '../../schema'
import { agentGateway } from './access'

/**
 * What the platform pushes to an agent's runtime (`POST /api/gateway/sync`), built in one place for every caller
 * (`POST /api/agents/:id/sync`, skill install and uninstall): the runtime replaces its whole state with it, so a
 * partial payload would erase what it leaves out.
 * - skills: the agent's enabled installed skills, oldest installation first, each as its `service.skill.v1`
 *   manifest, versioned by the skill's `updatedAt`;
 * - memories: the agent's `config.memories` (an object of strings, or a list of `{key, value}` strings);
 * - files: none yet (the files family stores them per user).
 */
export async function agentSyncPayload(db: Db, agent: Agent): Promise<SyncPayload> {
  const installed = await withUser(db, agent.userId, (tx) =>
    tx
      .select({
        id: skills.id,
        name: skills.name,
        description: skills.description,
        category: skills.category,
        author: skills.author,
        code: skills.code,
        mcpEnabled: skills.mcpEnabled,
        mcpConfig: skills.mcpConfig,
        widgetUrl: skills.widgetUrl,
        widgetConfig: skills.widgetConfig,
        updatedAt: skills.updatedAt,
      })
      .from(skillInstallations)
      .innerJoin(skills, eq(skills.id, skillInstallations.skillId))
      .where(and(eq(skillInstallations.agentId, agent.id), eq(skillInstallations.enabled, true)))
      .orderBy(asc(skillInstallations.installedAt), asc(skills.id)),
  )
  const exportedAt = new Date()
  return {
    skills: installed.map((s) => ({ name: s.name, version: s.updatedAt.toISOString(), manifest: skillManifest(s, exportedAt) })),
    memories: memoriesOf(agent.config),
    files: [],
  }
}

/** `config.memories` as the sync payload's list; anything else in it is skipped. */
export function memoriesOf(config: Record<string, unknown>): SyncPayload['memories'] {
  const m = config.memories
  if (Array.isArray(m)) {
    return m.flatMap((e) => (e && typeof e === 'object' && typeof e.key === 'string' && typeof e.value === 'string' ? [{ key: e.key, value: e.value }] : []))
  }
  if (m && typeof m === 'object') return Object.entries(m).flatMap(([key, value]) => (typeof value === 'string' ? [{ key, value }] : []))
  return []
}

/**
 * Pushes the agent's payload to its runtime and answers what was pushed. A `RuntimeProviderError` when the runtime
 * is missing (404: no URL or token yet) or does not accept it (502).
 */
export async function syncAgent(services: Pick<Services, 'db' | 'config' | 'runtimes'>, agent: Agent): Promise<SyncPayload> {
  const payload = await agentSyncPayload(services.db, agent)
  await (await agentGateway(services, agent)).sync(payload)
  return payload
}
