import { underFault } from '../../support/fault-proxy'
import { describe, expect, it } from 'vitest'
import { setPlan } from '../../auth/helpers'
import type { SeededUser } from '../../support/harness'
import { useFixture } from '../../support/harness'
import { seedAgent } from '../instance/helpers'
import { binary, download, filesHarness, list, objectsOf, recordsOf, remove, upload, usageOf } from './helpers'

/** Each storage call gives up after this long (`S3_TIMEOUT_MS`): a store that never answers fails the request in time. */
const S3_TIMEOUT_MS = 400
/** The bound on an answer while storage is down: the call's deadline, and room for a loaded machine. */
const ANSWER_WITHIN_MS = S3_TIMEOUT_MS + 1500
const UNAVAILABLE = { error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' }

/**
 * S3 (s3rver) behind the fault proxy, refused (connections refused) and blackholed (accepted, never answered):
 * uploads and downloads answer 502 `STORAGE_UNAVAILABLE` within the call's deadline, nothing half-done is kept (no
 * record, no object, no bytes counted for a failed upload; the file kept for a failed download or delete), and the
 * same requests succeed once storage is back.
 */
describe('files on S3 while storage is down', () => {
  let n = 0
  const h = useFixture(() => filesHarness('s3', { S3_TIMEOUT_MS: String(S3_TIMEOUT_MS) }, { faultProxy: true }), { close: (x) => x.closeAll() })

  async function fresh() {
    const user = await h.seedUser(`S${++n}`, `storage-down-${n}-${crypto.randomUUID()}@example.com`)
    await setPlan(h.db, user.id, 'solo', `sub_storage_${n}`)
    return { user, agent: await seedAgent(h, user) }
  }

  async function put(user: SeededUser, agentId: string, size: number) {
    const res = await upload(h, user, agentId, { filename: `f-${size}.bin`, data: binary(size) })
    expect(res.status).toBe(201)
    return (await res.json()).file as { id: string; size: number }
  }

  /** Runs `fn` with storage under `fault`, timing it; storage passes again afterwards. */
  const whileDown = <T>(fault: 'refuse' | 'blackhole', fn: () => T | Promise<T>) => underFault(h.proxy!, fault, fn)

  it.each(['refuse', 'blackhole'] as const)('upload while storage is %sd → 502 in time; nothing kept or counted; the same upload then succeeds', async (fault) => {
    const { user, agent } = await fresh()
    const { value: res, ms } = await whileDown(fault, () => upload(h, user, agent.id, { filename: 'a.bin', data: binary(3000) }))
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual(UNAVAILABLE)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect(await recordsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0)
    expect(await objectsOf(h, user.id)).toEqual([])

    const file = await put(user, agent.id, 3000)
    expect(file.size).toBe(3000)
    expect(await usageOf(h, user.id)).toBe(3000)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
  })

  it.each(['refuse', 'blackhole'] as const)('download while storage is %sd → 502 in time; the file stays listed and counted; then it downloads', async (fault) => {
    const { user, agent } = await fresh()
    const file = await put(user, agent.id, 1234)
    const { value: res, ms } = await whileDown(fault, () => download(h, user, file.id))
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual(UNAVAILABLE)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect((await (await list(h, user)).json()).count).toBe(1)
    expect(await usageOf(h, user.id)).toBe(1234)

    const back = await download(h, user, file.id)
    expect(back.status).toBe(200)
    expect(new Uint8Array(await back.arrayBuffer())).toEqual(binary(1234))
  })

  it('delete while storage is blackholed → 502 in time; the file is hidden and still counted; sending it again deletes it', async () => {
    const { user, agent } = await fresh()
    const file = await put(user, agent.id, 2000)
    const { value: res, ms } = await whileDown('blackhole', () => remove(h, user, { fileId: file.id }))
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual(UNAVAILABLE)
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect((await (await list(h, user)).json()).count).toBe(0)
    expect(await objectsOf(h, user.id)).toHaveLength(1)
    expect(await usageOf(h, user.id)).toBe(2000)

    expect(await (await remove(h, user, { fileId: file.id })).json()).toEqual({ success: true, fileId: file.id })
    expect(await objectsOf(h, user.id)).toEqual([])
    expect(await usageOf(h, user.id)).toBe(0)
  })
})
