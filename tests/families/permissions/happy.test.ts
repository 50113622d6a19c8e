import { describe, expect, it } from 'vitest'
import { classifyToolCall } from '../../../functions/permissions/hooks/classify'
import { MAX_STORED_TOOL_INPUT_CHARS } from '../../../functions/permissions/requests'
import { permissionRequests } from '../../../schema'
import type { Harness } from '../../support/harness'
import { call } from '../../support/requests'
import { seedAgent } from '../instance/helpers'
import { dangerousCall, hook, permissionsHarness, poll, storedRequest } from './helpers'
import { useFixture } from '../../support/harness'

const h = useFixture(() => permissionsHarness())

type Classification = { allow: boolean; tier: string; reason: string; requestId?: string }
const classify = async (body: unknown) => {
  const res = await hook(h, body)
  expect(res.status).toBe(200)
  return (await res.json()) as Classification
}
const requestCount = async () => (await h.db.select().from(permissionRequests)).length

describe('permissions: the classify hook', () => {
  it('safe (`read`, an ordinary write): allow, no requestId, nothing recorded', async () => {
    const before = await requestCount()
    const read = await classify({ toolName: 'read', toolInput: { path: '/etc/hosts' }, userId: h.users.alice.id })
    expect(read).toEqual({ allow: true, tier: 'safe', reason: expect.any(String) })
    const write = await classify({ toolName: 'write', toolInput: { path: 'notes.md' } })
    expect(write).toMatchObject({ allow: true, tier: 'safe' })
    expect(write).not.toHaveProperty('requestId')
    expect(await requestCount()).toBe(before)
  })

  it('dangerous (an unknown tool, a write to `.env`): refused with a requestId, recorded pending with the call', async () => {
    const alice = h.users.alice
    const unknown = await classify({ toolName: 'frobnicate', toolInput: { level: 11 }, agentId: 'agent-1', userId: alice.id })
    expect(unknown).toEqual({ allow: false, tier: 'dangerous', reason: expect.any(String), requestId: expect.any(String) })
    const row = await storedRequest(h, unknown.requestId!)
    expect(row).toMatchObject({ userId: alice.id, agentId: 'agent-1', toolName: 'frobnicate', toolInput: { level: 11 }, reason: unknown.reason, status: 'pending', decidedAt: null })

    const env = await classify({ toolName: 'write', toolInput: { path: '.env', content: 'KEY=1' }, userId: alice.id })
    expect(env).toMatchObject({ allow: false, tier: 'dangerous' })
    expect((await storedRequest(h, env.requestId!)).toolInput).toEqual({ path: '.env', content: 'KEY=1' })
  })

  const destructive = { toolName: 'bash', toolInput: { command: 'rm -rf /' } }
  it.skipIf(classifyToolCall(destructive.toolName, destructive.toolInput).tier !== 'destructive')(
    'destructive: refused, never askable (no requestId, nothing recorded)',
    async () => {
      const before = await requestCount()
      expect(await classify({ ...destructive, userId: h.users.alice.id })).toEqual({ allow: false, tier: 'destructive', reason: expect.any(String) })
      expect(await requestCount()).toBe(before)
    },
  )

  it('defaults: toolInput {}, agentId and userId `unknown` (an ownerless request)', async () => {
    const { requestId } = await classify({ toolName: 'frobnicate' })
    expect(await storedRequest(h, requestId!)).toMatchObject({ agentId: 'unknown', userId: null, toolInput: {} })
  })

  it('owner: the owner of agentId; else userId when it is a user; else nobody', async () => {
    const { alice, bob } = h.users
    const bobsAgent = await seedAgent(h, bob)
    const owner = async (body: Record<string, unknown>) => (await storedRequest(h, await dangerousCall(h, body.userId as string, body))).userId
    expect(await owner({ userId: alice.id, agentId: 'anything' })).toBe(alice.id)
    expect(await owner({ userId: 'unknown', agentId: bobsAgent.id })).toBe(bob.id)
    expect(await owner({ userId: 'not-a-user', agentId: bobsAgent.id })).toBe(bob.id)
    expect(await owner({ userId: alice.id, agentId: bobsAgent.id })).toBe(bob.id) // the agent's owner wins over a claimed user
    expect(await owner({ userId: 'not-a-user', agentId: 'not-an-agent' })).toBeNull()
  })

  it(`toolInput over ${MAX_STORED_TOOL_INPUT_CHARS} characters is classified whole and stored as a capped preview`, async () => {
    // The JSON's first 31 characters are ASCII, then 2 UTF-16 units per emoji: the cap falls inside a pair.
    const toolInput = { path: '.ssh/keys', content: '😀'.repeat(12_000) }
    const { requestId } = await classify({ toolName: 'write', toolInput, userId: h.users.alice.id })
    const stored = (await storedRequest(h, requestId!)).toolInput as { truncated: boolean; size: number; preview: string }
    const json = JSON.stringify(toolInput)
    expect(stored.truncated).toBe(true)
    expect(stored.size).toBe(json.length)
    expect(stored.preview).toBe(json.slice(0, MAX_STORED_TOOL_INPUT_CHARS - 1)) // the lone high half is left out
  })
})

describe("permissions: the hook's poll", () => {
  it('pending, then the decision with its time', async () => {
    const alice = h.users.alice
    const requestId = await dangerousCall(h, alice.id)
    const first = await poll(h, requestId)
    expect(first.status).toBe(200)
    const row = await storedRequest(h, requestId)
    const expiresAt = new Date(row.createdAt.getTime() + 10 * 60_000).toISOString()
    expect(await first.json()).toEqual({ requestId, status: 'pending', decidedAt: null, expired: false, expiresAt })
    await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body: { decision: 'approve' } })
    const after = (await (await poll(h, requestId)).json()) as { status: string; decidedAt: string }
    expect(after.status).toBe('approved')
    expect(Date.now() - Date.parse(after.decidedAt)).toBeLessThan(60_000)
  })
})

describe('permissions: the list and decisions', () => {
  it("GET /api/permissions: the caller's pending requests, newest first, with every field", async () => {
    const { bob } = h.users
    const older = await dangerousCall(h, bob.id, { agentId: 'agent-b' })
    const newer = await dangerousCall(h, bob.id, { agentId: 'agent-b' })
    const decided = await dangerousCall(h, bob.id)
    await call(h, 'POST', `/api/permissions/${decided}`, { user: bob, body: { decision: 'deny' } })
    const res = await call(h, 'GET', '/api/permissions', { user: bob })
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-limit')).toBe('120')
    const { requests } = (await res.json()) as { requests: Array<Record<string, unknown>> }
    const mine = requests.filter((r) => [older, newer, decided].includes(r.requestId as string))
    expect(mine.map((r) => r.requestId)).toEqual([newer, older])
    const row = await storedRequest(h, newer)
    expect(mine[0]).toEqual({
      requestId: newer,
      agentId: 'agent-b',
      toolName: 'frobnicate',
      toolInput: { level: 11 },
      reason: row.reason,
      status: 'pending',
      createdAt: row.createdAt.toISOString(),
      expiresAt: new Date(row.createdAt.getTime() + 10 * 60_000).toISOString(),
      decidedAt: null,
    })
  })

  it('lists at most 100, the newest', async () => {
    const user = await h.seedUser('Many', `many-${crypto.randomUUID()}@example.com`)
    // Within the last 10 minutes: older ones have expired and are not listed.
    const base = Date.now() - 200_000
    await h.db.insert(permissionRequests).values(
      Array.from({ length: 105 }, (_, i) => ({ userId: user.id, agentId: 'a', toolName: `tool-${i}`, reason: 'r', createdAt: new Date(base + i * 1000) })),
    )
    const { requests } = (await (await call(h, 'GET', '/api/permissions', { user })).json()) as { requests: Array<{ toolName: string }> }
    expect(requests).toHaveLength(100)
    expect(requests[0].toolName).toBe('tool-104')
    expect(requests[99].toolName).toBe('tool-5')
  })

  it('POST /api/permissions/:id approve and deny: 200 with the new state, recorded once', async () => {
    const alice = h.users.alice
    for (const [decision, status] of [['approve', 'approved'], ['deny', 'denied']] as const) {
      const requestId = await dangerousCall(h, alice.id)
      const res = await call(h, 'POST', `/api/permissions/${requestId}`, { user: alice, body: { decision } })
      expect(res.status).toBe(200)
      const body = (await res.json()) as Record<string, string>
      expect(body).toMatchObject({ requestId, status, toolName: 'frobnicate', toolInput: { level: 11 } })
      const row = await storedRequest(h, requestId)
      expect(row.status).toBe(status)
      expect(body.decidedAt).toBe(row.decidedAt!.toISOString())
      const listed = (await (await call(h, 'GET', '/api/permissions', { user: alice })).json()) as { requests: Array<{ requestId: string }> }
      expect(listed.requests.some((r) => r.requestId === requestId)).toBe(false)
    }
  })
})
