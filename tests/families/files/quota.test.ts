import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { STALE_PENDING_MS } from '../../../lib/files/records'
import { accessPlan } from '../../../lib/billing/plans'
import { STORAGE_QUOTA_BYTES, storageQuota } from '../../../functions/files/quota'
import { MAX_BYTES_BEFORE_FILE } from '../../../functions/files/upload'
import { files } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import type { SeededUser } from '../../support/harness'
import { seedAgent } from '../instance/helpers'
import {
  binary,
  filesHarness,
  list,
  multipart,
  objectsOf,
  recordsOf,
  remove,
  RESERVE_SLACK,
  send,
  setUsage,
  STORES,
  upload,
  usageOf,
} from './helpers'
import { useFixture } from '../../support/harness'

const GiB = 1024 ** 3
const day = 24 * 60 * 60 * 1000

describe('storageQuota: bytes per plan', () => {
  const config = { ADMIN_EMAILS: ['admin@example.com'], serviceDomain: 'localhost' }
  const record = (plan: string | null, subscriptionStatus = 'active', trialEndsAt: Date | null = null, email = 'someone@example.com') =>
    ({ plan, subscriptionStatus, trialEndsAt, email, emailVerifiedAt: new Date() })
  const quotaOf = (r: ReturnType<typeof record>) => {
    const plan = accessPlan(r, config)
    return plan && storageQuota(plan)
  }

  it('solo 1 GiB, collective 5 GiB, label 20 GiB, network 100 GiB while paid (active or past due)', () => {
    expect(STORAGE_QUOTA_BYTES).toEqual({ solo: GiB, collective: 5 * GiB, label: 20 * GiB, network: 100 * GiB })
    for (const plan of ['solo', 'collective', 'label', 'network'] as const) {
      expect(quotaOf(record(plan))).toEqual({ plan, limitBytes: STORAGE_QUOTA_BYTES[plan] })
      expect(quotaOf(record(plan, 'past_due'))).toEqual({ plan, limitBytes: STORAGE_QUOTA_BYTES[plan] })
    }
    expect(quotaOf(record('pro'))).toEqual({ plan: 'collective', limitBytes: 5 * GiB }) // a legacy name
  })

  it('the trial runs on solo; without paid access there is no quota (uploads are 402); admins get network’s', () => {
    expect(quotaOf(record(null, 'inactive', new Date(Date.now() + day)))).toEqual({ plan: 'solo', limitBytes: GiB })
    for (const r of [record(null, 'inactive'), record('label', 'canceled'), record('free'), record(null, 'inactive', new Date(Date.now() - day))]) {
      expect(quotaOf(r)).toBeNull()
    }
    expect(quotaOf(record(null, 'inactive', null, 'admin@example.com'))).toEqual({ plan: 'network', limitBytes: 100 * GiB })
  })
})

describe.each(STORES)('files on the %s store: the storage quota', (kind) => {
  let n = 0
  const h = useFixture(() => filesHarness(kind), { close: (x) => x.closeAll() })

  /** A fresh user with an agent, on `plan` (null: no paid access). */
  async function fresh(plan: 'solo' | 'collective' | null) {
    const user = await h.seedUser(`Q${++n}`, `quota-${n}-${crypto.randomUUID()}@example.com`, { plan: null })
    if (plan) await setPlan(h.db, user.id, plan, `sub_${n}`)
    const agent = (await seedAgent(h, user)).id
    return { user, agent }
  }

  /** The user's files already hold `bytes` (a record of that size, and the usage row to match). */
  async function fillTo(user: SeededUser, agent: string, bytes: number) {
    await h.db.insert(files).values({ userId: user.id, agentId: agent, filename: 'base', storageKey: `files/${user.id}/base`, size: bytes, mimeType: 'x/y', status: 'stored' })
    await setUsage(h, user.id, bytes)
  }

  /** A body stream that counts what the server pulled from it. */
  function counted(bytes: Uint8Array, chunk = 16 * 1024) {
    const state = { pulled: 0 }
    let at = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= bytes.length) return c.close()
        const piece = bytes.slice(at, at + chunk)
        at += piece.length
        state.pulled += piece.length
        c.enqueue(piece)
      },
    })
    return { stream, state }
  }

  it('without paid access (no plan, the trial over) → 402 before the body is read; nothing stored or counted', async () => {
    const { user, agent } = await fresh(null)
    await setPlan(h.db, user.id, null, null, { trialEndsAt: new Date(Date.now() - 1000) })
    const { stream, state } = counted(multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'a.bin', data: binary(200_000) }]))
    const res = await send(h, stream, { user })
    expect(res.status).toBe(402)
    expect(await res.json()).toEqual({ error: 'Paid plan required', code: 'PLAN_REQUIRED' })
    expect(state.pulled).toBeLessThanOrEqual(16 * 1024) // at most what the client had already queued
    expect(await recordsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0)
  })

  it('a Content-Length past the quota → 413 {plan, limitBytes, usedBytes} before the body is read', async () => {
    const { user, agent } = await fresh('solo')
    const head = multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'huge.bin', data: binary(1024) }])
    const { stream, state } = counted(head)
    const res = await send(h, stream, { user, headers: { 'content-length': String(GiB + MAX_BYTES_BEFORE_FILE + 1000) } })
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ error: 'Storage limit exceeded', code: 'STORAGE_LIMIT', plan: 'solo', limitBytes: GiB, usedBytes: 0 })
    expect(state.pulled).toBeLessThanOrEqual(16 * 1024) // at most what the client had already queued
    expect(await recordsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0)
  })

  it('near the edge: a file that does not fit → 413 with the usage; nothing stored, nothing counted', async () => {
    const { user, agent } = await fresh('collective')
    await fillTo(user, agent, 5 * GiB - 1000)
    const res = await upload(h, user, agent, { filename: 'over.bin', data: binary(2000) })
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ error: 'Storage limit exceeded', code: 'STORAGE_LIMIT', plan: 'collective', limitBytes: 5 * GiB, usedBytes: 5 * GiB - 1000 })
    expect((await recordsOf(h, user.id)).map((r) => r.filename)).toEqual(['base'])
    expect(await objectsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(5 * GiB - 1000)
  })

  it('a Content-Length within 64 KiB of the room left is decided at the file part, where it fits', async () => {
    const { user, agent } = await fresh('solo')
    await fillTo(user, agent, GiB - 10_000)
    // The body is longer than the room left, but its file is not.
    const res = await send(h, multipart([{ name: 'agentId', value: agent }, { name: 'pad', value: 'p'.repeat(20_000) }, { name: 'file', filename: 'fits.bin', data: binary(9_000) }]), { user })
    expect(res.status).toBe(201)
    expect(await usageOf(h, user.id)).toBe(GiB - 1_000)
  })

  it('concurrent uploads at the edge: exactly the ones that fit land; the last bytes fit a file of their size', async () => {
    const { user, agent } = await fresh('solo')
    const size = 30_000
    const room = 3 * (size + RESERVE_SLACK)
    await fillTo(user, agent, GiB - room)
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => upload(h, user, agent, { filename: `race-${i}.bin`, data: binary(size) })))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([201, 201, 201, 413, 413, 413])
    expect(await usageOf(h, user.id)).toBe(GiB - 3 * RESERVE_SLACK) // each gave back the slack it did not use
    expect((await recordsOf(h, user.id, 'stored')).length).toBe(4)
    expect(await recordsOf(h, user.id, 'pending')).toEqual([])
    expect((await objectsOf(h, user.id)).length).toBe(3)
    // What is left fits a file of exactly (left - slack) bytes, and then nothing more.
    const last = await upload(h, user, agent, { filename: 'last.bin', data: binary(3 * RESERVE_SLACK - RESERVE_SLACK) })
    expect(last.status).toBe(201)
    expect(await usageOf(h, user.id)).toBe(GiB - RESERVE_SLACK) // full but for the slack it reserved and gave back
    expect((await upload(h, user, agent, { filename: 'one-more.bin', data: 'x' })).status).toBe(413)
    // A delete gives its bytes back: the refused file now fits.
    const { file } = await last.json()
    expect((await remove(h, user, { fileId: file.id })).status).toBe(200)
    expect(await usageOf(h, user.id)).toBe(GiB - 3 * RESERVE_SLACK)
    expect((await upload(h, user, agent, { filename: 'one-more.bin', data: 'x' })).status).toBe(201)
  })

  it('a streamed body (no Content-Length) is refused once it passes the quota, not read to its end; nothing kept', async () => {
    const { user, agent } = await fresh('solo')
    await fillTo(user, agent, GiB - 100_000)
    const body = multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'stream.bin', data: binary(1_000_000) }])
    const { stream, state } = counted(body)
    const res = await send(h, stream, { user })
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ error: 'Storage limit exceeded', code: 'STORAGE_LIMIT' })
    expect(state.pulled).toBeLessThan(400_000)
    expect((await recordsOf(h, user.id)).map((r) => r.filename)).toEqual(['base'])
    expect(await objectsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(GiB - 100_000)
    // The same file within the quota, streamed: stored at its exact size.
    const small = multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'fits.bin', data: binary(99_000) }])
    expect((await send(h, small, { user, stream: true })).status).toBe(201)
    expect(await usageOf(h, user.id)).toBe(GiB - 1_000)
  })

  it('an upload that died with its process (pending for over a day) is swept by the next one: record, object and bytes', async () => {
    const { user, agent } = await fresh('solo')
    const id = crypto.randomUUID()
    const storageKey = `files/${user.id}/${id}`
    await h.services.storage.put(storageKey, binary(5000), 'application/octet-stream')
    await h.db.insert(files).values({ id, userId: user.id, agentId: agent, filename: 'dead', storageKey, size: 5000, mimeType: 'x/y', status: 'pending', createdAt: new Date(Date.now() - STALE_PENDING_MS - 60_000) })
    await setUsage(h, user.id, 5000)
    const res = await upload(h, user, agent, { filename: 'alive.txt', data: 'alive' })
    expect(res.status).toBe(201)
    expect((await recordsOf(h, user.id)).map((r) => r.filename)).toEqual(['alive.txt'])
    expect(await h.services.storage.get(storageKey)).toBeNull()
    expect(await usageOf(h, user.id)).toBe(5)
    expect((await (await list(h, user)).json()).totalSize).toBe(5)
  })

  it('a pending upload younger than a day is left alone (it may still be running)', async () => {
    const { user, agent } = await fresh('solo')
    const id = crypto.randomUUID()
    await h.db.insert(files).values({ id, userId: user.id, agentId: agent, filename: 'running', storageKey: `files/${user.id}/${id}`, size: 5000, mimeType: 'x/y', status: 'pending' })
    await setUsage(h, user.id, 5000)
    expect((await upload(h, user, agent, { filename: 'other.txt', data: 'other' })).status).toBe(201)
    expect((await recordsOf(h, user.id, 'pending')).map((r) => r.id)).toEqual([id])
    expect(await usageOf(h, user.id)).toBe(5005)
    await h.db.delete(files).where(eq(files.id, id))
  })
})

describe('files: a storage failure mid-upload', () => {
  // An S3 endpoint where nothing listens: every write fails at once.
  const h = useFixture(() => filesHarness('s3', { S3_ENDPOINT: 'http://127.0.0.1:9' }), { close: (x) => x.closeAll() })

  it('→ 502 STORAGE_UNAVAILABLE; the reservation is given back and no record is left', async () => {
    const user = h.users.alice
    await setPlan(h.db, user.id, 'solo', 'sub_fail')
    const agent = (await seedAgent(h, user)).id
    const res = await upload(h, user, agent, { filename: 'lost.bin', data: binary(10_000) })
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({ error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' })
    expect(await recordsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0)
  })
})
