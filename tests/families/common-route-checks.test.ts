import { eq } from 'drizzle-orm'
import { backendApiDocument } from '../../functions/backend/app'
import { webApiDocument } from '../../functions/docs/document'
import { agents, apiKeys, chatJobs, passkeys, permissionRequests } from '../../schema'
import { insertApiKey } from '../auth/helpers'
import { runCommonRouteTests, type OwnedResourceKind } from '../support/common-route-tests'
import { type Harness, PAYING, type SeededUser, useHarness } from '../support/harness'
import { seedJob } from './chat/helpers'
import { seedAgent } from './instance/helpers'

/**
 * The signed-out, forged-credential and other-user checks of every documented operation, derived from the
 * OpenAPI documents (tests/support/common-route-tests.ts). Family suites keep what is specific to them.
 */
const h = useHarness({
  // Every scheme configured, so a refusal is the scheme's, never "not configured"; everyone has paid access, so
  // another user's attempt is refused for being another user's, never for want of a plan.
  env: { INTERNAL_API_KEY: 'common-route-checks-shared-key', HMAC_SECRET: 'common-route-checks-hmac', QSTASH_CURRENT_SIGNING_KEY: 'common-route-checks-queue' },
  plan: PAYING,
})

const row = <T>(rows: Promise<T[]>) => rows.then((r) => r[0])
const agentState = (h: Harness, id: string) => row(h.db.select().from(agents).where(eq(agents.id, id)))

/** The resources an operation's path can name, each made fresh for one check. */
const owned: OwnedResourceKind[] = [
  {
    paths: /^\/api\/keys\/\{id\}$/,
    reach: { method: 'GET', path: '/api/keys/{id}', status: 200 },
    async create(h, owner) {
      const { id } = await insertApiKey(h.db, owner.id)
      return { params: { id }, state: () => row(h.db.select().from(apiKeys).where(eq(apiKeys.id, id))) }
    },
  },
  {
    paths: /^\/api\/passkeys\/\{id\}$/,
    async create(h, owner) {
      const [key] = await h.db.insert(passkeys).values({ id: `cred-${crypto.randomUUID()}`, userId: owner.id, publicKey: 'pQECAyYgASFYIA' }).returning()
      return { params: { id: key.id }, state: () => row(h.db.select().from(passkeys).where(eq(passkeys.id, key.id))) }
    },
  },
  {
    paths: /^\/api\/(agents\/\{id\}|logs\/\{agentId\})(\/|$)/,
    reach: { method: 'GET', path: '/api/agents/{id}', status: 200 },
    async create(h, owner) {
      const agent = await seedAgent(h, owner)
      return { params: { id: agent.id, agentId: agent.id }, state: () => agentState(h, agent.id) }
    },
  },
  {
    paths: /^\/api\/instance\/\{userId\}(\/|$)/,
    async create(h, owner) {
      const agent = await seedAgent(h, owner)
      return { params: { userId: owner.id }, state: () => agentState(h, agent.id) }
    },
  },
  {
    paths: /^\/api\/jobs\/\{jobId\}(\/|$)/,
    reach: { method: 'GET', path: '/api/jobs/{jobId}', status: 200 },
    async create(h, owner) {
      const job = await seedJob(h, owner, await seedAgent(h, owner))
      return { params: { jobId: job.id }, state: () => row(h.db.select().from(chatJobs).where(eq(chatJobs.id, job.id))) }
    },
  },
  {
    paths: /^\/api\/permissions\/\{requestId\}$/,
    async create(h, owner) {
      const [request] = await h.db
        .insert(permissionRequests)
        .values({ userId: owner.id, agentId: 'agent-1', toolName: 'frobnicate', toolInput: { level: 11 }, reason: 'dangerous' })
        .returning()
      return { params: { requestId: request.id }, state: () => row(h.db.select().from(permissionRequests).where(eq(permissionRequests.id, request.id))) }
    },
  },
]

/** Bodies the operations validate before they look the resource up: valid ones, so what answers is the lookup. */
const bodies: Record<string, (ctx: { h: Harness; caller: SeededUser }) => unknown> = {
  'PUT /api/agents/{id}': () => ({ name: 'renamed' }),
  'PUT /api/agents/{id}/config': () => ({ config: {} }),
  'POST /api/jobs/{jobId}/claim': async ({ h, caller }) => ({ claimerAgentId: (await seedAgent(h, caller)).id }),
  'POST /api/jobs/{jobId}/complete': () => ({ leaseId: crypto.randomUUID(), result: { reply: 'done' } }),
  'POST /api/jobs/{jobId}/fail': () => ({ leaseId: crypto.randomUUID(), reason: 'could not' }),
  'POST /api/permissions/{requestId}': () => ({ decision: 'approve' }),
}

runCommonRouteTests(h, {
  documents: { web: webApiDocument(), backend: backendApiDocument() },
  owned,
  bodies,
  undocumentedRefusals: {
    'backend POST /api/heartbeat': 'never refuses (its description: always 200); its security lists no `{}` all the same',
  },
})
