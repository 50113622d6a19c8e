import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { STALE_PENDING_MS } from '../../../lib/files/records'
import { agents, files } from '../../../schema'
import { setPlan } from '../../auth/helpers'
import { BROWSER, type SeededUser, useFixture } from '../../support/harness'
import { seedAgent } from '../instance/helpers'
import {
  binary,
  deliverPurge,
  download,
  type FilesHarness,
  filesHarness,
  list,
  multipart,
  objectsOf,
  queueIdle,
  recordsOf,
  remove,
  send,
  setUsage,
  STORES,
  upload,
  usageOf,
} from './helpers'

/**
 * Deleting frees only what is gone: an agent's delete hides its files at once and queues the deletion of their
 * objects (local files and S3) to the files family, and bytes stay counted in the quota until their objects are
 * deleted (a failed delete is tried again: by the queue, and by the user's next upload).
 */
const deleteAgent = (h: FilesHarness, user: SeededUser, agentId: string) =>
  h.web.request(`/api/agents/${agentId}`, { method: 'DELETE', headers: { ...BROWSER, cookie: user.cookie } })

const agentRow = async (h: FilesHarness, id: string) => (await h.db.select().from(agents).where(eq(agents.id, id)))[0]

describe.each(STORES)('files on the %s store: deleting an agent deletes its objects', (kind) => {
  let n = 0
  const h = useFixture(() => filesHarness(kind), { close: (x) => x.closeAll() })

  async function fresh(plan: 'solo' | null = 'solo') {
    const user = await h.seedUser(`D${++n}`, `deleting-${n}-${crypto.randomUUID()}@example.com`)
    if (plan) await setPlan(h.db, user.id, plan, `sub_del_${n}`)
    return user
  }

  async function put(user: SeededUser, agentId: string, size: number) {
    const res = await upload(h, user, agentId, { filename: `f-${size}.bin`, data: binary(size) })
    expect(res.status).toBe(201)
    return (await res.json()).file as { id: string; size: number }
  }

  it('DELETE /api/agents/:id hides the agent’s files at once; the queued purge deletes their objects, then their records and bytes; another agent’s files stay', async () => {
    const user = await fresh()
    const doomed = await seedAgent(h, user)
    const kept = await seedAgent(h, user)
    await put(user, doomed.id, 3000)
    await put(user, doomed.id, 4000)
    const survivor = await put(user, kept.id, 500)
    expect(await objectsOf(h, user.id)).toHaveLength(3)
    expect(await usageOf(h, user.id)).toBe(7500)

    const res = await deleteAgent(h, user, doomed.id)
    expect(res.status).toBe(200)
    expect(await agentRow(h, doomed.id)).toBeUndefined()
    expect((await (await list(h, user)).json()).files.map((f: { id: string }) => f.id)).toEqual([survivor.id]) // hidden at once
    await queueIdle(h)
    // The objects are gone from the store itself (the local directory, or s3rver's), not only their records.
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect((await recordsOf(h, user.id)).map((r) => r.id)).toEqual([survivor.id])
    expect(await usageOf(h, user.id)).toBe(500)
    expect(await (await download(h, user, survivor.id)).arrayBuffer()).toEqual(binary(500).buffer)
  })

  it('upload, delete the agent, repeat: the store never holds more than the quota counts', async () => {
    const user = await fresh(null) // 100 MiB without paid access
    for (let round = 0; round < 3; round++) {
      const agent = await seedAgent(h, user)
      await put(user, agent.id, 20_000)
      expect((await deleteAgent(h, user, agent.id)).status).toBe(200)
      await queueIdle(h)
      expect(await objectsOf(h, user.id)).toEqual([])
      expect(await usageOf(h, user.id)).toBe(0)
    }
    // The next upload's recount agrees: nothing is held, nothing is counted.
    const last = await seedAgent(h, user)
    await put(user, last.id, 10)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect(await usageOf(h, user.id)).toBe(10)
  })

  it('an agent with no files, or a template, is deleted as before', async () => {
    const user = await fresh()
    for (const agent of [await seedAgent(h, user), await seedAgent(h, user, { status: 'template' })]) {
      expect((await deleteAgent(h, user, agent.id)).status).toBe(200)
      expect(await agentRow(h, agent.id)).toBeUndefined()
    }
  })

  it('an agent deleted (DELETE /api/agents/:id) while its file uploads: the upload → 404, and nothing is left or counted', async () => {
    const user = await fresh()
    const doomed = await seedAgent(h, user)
    const body = multipart([{ name: 'agentId', value: doomed.id }, { name: 'file', filename: 'late.bin', data: binary(30_000) }])
    const split = body.length - 10_000
    let step = 0
    let deleted: Response | undefined
    const slow = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (step === 0) c.enqueue(body.subarray(0, split))
        else if (step === 1) {
          // Once the upload has reserved its bytes (its pending record exists), the agent is deleted through the API.
          for (let i = 0; i < 100 && (await recordsOf(h, user.id, 'pending')).length === 0; i++) await new Promise((r) => setTimeout(r, 50))
          deleted = await deleteAgent(h, user, doomed.id)
          await queueIdle(h) // its purge done before the upload writes (s3rver fails a write raced by a delete of its key)
          c.enqueue(body.subarray(split))
        } else c.close()
        step++
      },
    })
    const res = await send(h, slow, { user })
    expect(res.status).toBe(404)
    expect(deleted?.status).toBe(200)
    expect(await agentRow(h, doomed.id)).toBeUndefined()
    expect(await recordsOf(h, user.id)).toEqual([])
    expect(await objectsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0) // given back by the delete, not by a later recount
  })

  it('files whose agent is deleted in the database directly are hidden, still counted, and deleted by the next upload', async () => {
    const user = await fresh()
    const doomed = await seedAgent(h, user)
    const other = await seedAgent(h, user)
    const orphan = await put(user, doomed.id, 1500)
    await h.db.delete(agents).where(eq(agents.id, doomed.id))
    expect((await recordsOf(h, user.id)).map((r) => [r.id, r.status, r.agentId])).toEqual([[orphan.id, 'stored', null]])
    expect((await (await list(h, user)).json()).files).toEqual([])
    expect((await download(h, user, orphan.id)).status).toBe(404)
    expect(await usageOf(h, user.id)).toBe(1500)
    await put(user, other.id, 10)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect((await recordsOf(h, user.id)).map((r) => r.agentId)).toEqual([other.id])
    expect(await usageOf(h, user.id)).toBe(10)
  })

  it('the purge receiver finishes every deleting record of the user and answers how many; again, none', async () => {
    const user = await fresh()
    const agent = await seedAgent(h, user)
    await put(user, agent.id, 1000)
    await put(user, agent.id, 2000)
    await h.db.update(files).set({ status: 'deleting' }).where(eq(files.userId, user.id))
    const first = await deliverPurge(h, user.id)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ ok: true, purged: 2 })
    expect(await objectsOf(h, user.id)).toEqual([])
    expect(await recordsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0)
    expect(await (await deliverPurge(h, user.id)).json()).toEqual({ ok: true, purged: 0 })
  })

  it.runIf(kind === 'local')('the purge receiver deletes at most 500 files a delivery and queues the rest', async () => {
    const user = await fresh()
    const agent = await seedAgent(h, user)
    const records = Array.from({ length: 520 }, () => {
      const id = crypto.randomUUID()
      return { id, userId: user.id, agentId: agent.id, filename: 'f', storageKey: `files/${user.id}/${id}`, size: 10, mimeType: 'x/y', status: 'deleting' }
    })
    await h.db.insert(files).values(records)
    await setUsage(h, user.id, 5200)
    expect(await (await deliverPurge(h, user.id)).json()).toEqual({ ok: true, purged: 500 })
    expect(await recordsOf(h, user.id)).toHaveLength(20)
    expect(await usageOf(h, user.id)).toBe(200)
    await queueIdle(h)
    expect(await recordsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0)
  })

  it('another user’s agent: 404, and its files, objects and bytes are untouched', async () => {
    const owner = await fresh()
    const other = await fresh()
    const agent = await seedAgent(h, owner)
    await put(owner, agent.id, 1234)
    const res = await deleteAgent(h, other, agent.id)
    expect(res.status).toBe(404)
    expect(await objectsOf(h, owner.id)).toHaveLength(1)
    expect((await recordsOf(h, owner.id, 'stored')).length).toBe(1)
    expect(await usageOf(h, owner.id)).toBe(1234)
  })
})

describe('files on S3 whose deletes fail: bytes stay counted until the objects are gone', () => {
  let n = 0
  const h = useFixture(() => filesHarness('s3', {}, { faultyDeletes: true }), { close: (x) => x.closeAll() })

  async function fresh() {
    const user = await h.seedUser(`F${++n}`, `faulty-${n}-${crypto.randomUUID()}@example.com`)
    await setPlan(h.db, user.id, 'solo', `sub_faulty_${n}`)
    return user
  }

  async function put(user: SeededUser, agentId: string, size: number) {
    const res = await upload(h, user, agentId, { filename: `f-${size}.bin`, data: binary(size) })
    expect(res.status).toBe(201)
    return (await res.json()).file as { id: string; size: number }
  }

  /** Waits until storage has refused one more delete than `before` (the queued purge's first try). */
  async function refusedPast(before: number) {
    for (let i = 0; i < 200 && h.faults.refused <= before; i++) await new Promise((r) => setTimeout(r, 25))
    expect(h.faults.refused).toBeGreaterThan(before)
  }

  it('an agent deleted while storage refuses: 200 and the agent is gone; its files stay hidden and counted until the queue’s retry deletes them', async () => {
    const user = await fresh()
    const doomed = await seedAgent(h, user)
    const other = await seedAgent(h, user)
    const file = await put(user, doomed.id, 6000)

    h.faults.failDeletes = true
    const before = h.faults.refused
    const res = await deleteAgent(h, user, doomed.id)
    expect(res.status).toBe(200)
    expect(await agentRow(h, doomed.id)).toBeUndefined()
    await refusedPast(before)
    // The record outlives its agent, deleting: hidden, no longer the agent's, still counted.
    expect((await recordsOf(h, user.id)).map((r) => [r.id, r.status, r.agentId])).toEqual([[file.id, 'deleting', null]])
    expect((await (await list(h, user)).json()).files).toEqual([])
    expect((await download(h, user, file.id)).status).toBe(404)
    expect(await objectsOf(h, user.id)).toHaveLength(1) // still held by the store…
    expect(await usageOf(h, user.id)).toBe(6000) // …so still counted
    // The agent is gone: its delete is not the retry any more (the queue's is).
    expect((await deleteAgent(h, user, doomed.id)).status).toBe(404)

    // An upload while storage still refuses: its retry fails too, and the recount frees nothing.
    await put(user, other.id, 100)
    expect(await usageOf(h, user.id)).toBe(6100)
    expect(await objectsOf(h, user.id)).toHaveLength(2)

    // Storage is back: the queue's next try deletes the object, then frees its bytes.
    h.faults.failDeletes = false
    await queueIdle(h)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect((await recordsOf(h, user.id)).every((r) => r.status === 'stored' && r.agentId === other.id)).toBe(true)
    expect(await usageOf(h, user.id)).toBe(100)
  }, 30_000)

  it('the purge receiver answers 502 while storage refuses (so the queue retries), and the next upload finishes what it could not', async () => {
    const user = await fresh()
    const doomed = await seedAgent(h, user)
    const other = await seedAgent(h, user)
    await put(user, doomed.id, 2500)
    await put(user, doomed.id, 1500)
    h.faults.failDeletes = true
    const before = h.faults.refused
    expect((await deleteAgent(h, user, doomed.id)).status).toBe(200)
    await refusedPast(before)
    const refused = await deliverPurge(h, user.id)
    expect(refused.status).toBe(502)
    expect(await refused.json()).toEqual({ error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' })
    expect(await usageOf(h, user.id)).toBe(4000)
    expect(await objectsOf(h, user.id)).toHaveLength(2)
    // Storage is back: the user's next upload deletes the objects first, then frees their bytes.
    h.faults.failDeletes = false
    await put(user, other.id, 10)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect((await recordsOf(h, user.id)).map((r) => r.status)).toEqual(['stored'])
    expect(await usageOf(h, user.id)).toBe(10)
    await queueIdle(h) // the queue's retry then finds nothing left
    expect(await usageOf(h, user.id)).toBe(10)
  }, 30_000)

  it('DELETE /api/files that storage refuses → 502; the file is hidden and counted; sending it again deletes it', async () => {
    const user = await fresh()
    const agent = await seedAgent(h, user)
    const file = await put(user, agent.id, 3210)
    h.faults.failDeletes = true
    const res = await remove(h, user, { fileId: file.id })
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({ error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' })
    expect((await (await list(h, user)).json()).count).toBe(0)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect(await usageOf(h, user.id)).toBe(3210)
    h.faults.failDeletes = false
    expect(await (await remove(h, user, { fileId: file.id })).json()).toEqual({ success: true, fileId: file.id })
    expect(await objectsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0)
    expect((await remove(h, user, { fileId: file.id })).status).toBe(404)
  })

  it('a stale upload’s object that storage will not delete stays counted; the next upload after storage is back frees it', async () => {
    const user = await fresh()
    const agent = await seedAgent(h, user)
    const id = crypto.randomUUID()
    const storageKey = `files/${user.id}/${id}`
    await h.services.storage.put(storageKey, binary(5000), 'application/octet-stream')
    await h.db.insert(files).values({ id, userId: user.id, agentId: agent.id, filename: 'dead', storageKey, size: 5000, mimeType: 'x/y', status: 'pending', createdAt: new Date(Date.now() - STALE_PENDING_MS - 60_000) })
    await setUsage(h, user.id, 5000)
    h.faults.failDeletes = true
    await put(user, agent.id, 5)
    expect((await recordsOf(h, user.id, 'deleting')).map((r) => r.id)).toEqual([id])
    expect(await usageOf(h, user.id)).toBe(5005)
    h.faults.failDeletes = false
    await put(user, agent.id, 6)
    expect(await h.services.storage.get(storageKey)).toBeNull()
    expect(await recordsOf(h, user.id, 'deleting')).toEqual([])
    expect(await usageOf(h, user.id)).toBe(11)
  })

  it('a written upload refused at its end, whose object storage will not delete, stays counted until a retry', async () => {
    const user = await fresh()
    const agent = await seedAgent(h, user)
    // A field after the file passes its 64 KiB bound: the object is complete, then the upload is refused.
    const body = multipart([{ name: 'agentId', value: agent.id }, { name: 'file', filename: 'late.bin', data: binary(4000) }, { name: 'pad', value: 'p'.repeat(70_000) }])
    h.faults.failDeletes = true
    const res = await send(h, body, { user })
    expect(res.status).toBe(400)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect((await recordsOf(h, user.id)).map((r) => r.status)).toEqual(['deleting'])
    expect(await usageOf(h, user.id)).toBeGreaterThanOrEqual(4000)
    h.faults.failDeletes = false
    await put(user, agent.id, 7)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect(await usageOf(h, user.id)).toBe(7)
  })
})
