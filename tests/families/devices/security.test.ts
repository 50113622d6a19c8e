import { eq } from 'drizzle-orm'
import { beforeAll, describe, expect, it } from 'vitest'
import { withUser } from '../../../lib/db/rls'
import { devices } from '../../../schema'
import { useHarness } from '../../support/harness'
import { expectOwnRowsOnly } from '../../support/rls'
import { call, FORBIDDEN_ORIGIN } from '../../support/requests'
import { act, deviceIn, lists, register, row } from './helpers'

let alicePending: string
let aliceApproved: string
const h = useHarness()
beforeAll(async () => {
  alicePending = await deviceIn(h, h.users.alice, 'pending')
  aliceApproved = await deviceIn(h, h.users.alice, 'approved')
  await deviceIn(h, h.users.bob, 'pending')
})

const routes = () =>
  [
    ['GET', '/api/devices', undefined],
    ['PUT', '/api/devices?name=x', undefined],
    ['POST', '/api/devices', { deviceId: alicePending, action: 'approve' }],
    ['POST', '/api/devices/pair', { name: 'x' }],
    ['GET', '/api/runtime/devices', undefined],
    ['POST', '/api/runtime/devices', { action: 'pair' }],
  ] as const

describe('devices: authentication', () => {
  it('every route → 401 {error:"Unauthorized"} without a session or with an unknown one; nothing changes', async () => {
    const before = await h.db.select().from(devices)
    for (const [method, path, body] of routes()) {
      for (const headers of [{}, { cookie: 'service-session=forged' }] as Record<string, string>[]) {
        const res = await call(h, method, path, { body, headers })
        expect(res.status, `${method} ${path}`).toBe(401)
        expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
      }
    }
    expect(await h.db.select().from(devices)).toEqual(before)
  })

  it('authentication comes before validation: invalid input without a session is 401, not 400', async () => {
    expect((await call(h, 'POST', '/api/devices', { body: {} })).status).toBe(401)
    expect((await call(h, 'POST', '/api/devices/pair', { body: '{' })).status).toBe(401)
    expect((await call(h, 'POST', '/api/runtime/devices', { body: { action: 'bad' } })).status).toBe(401)
    expect((await call(h, 'PUT', '/api/devices?name=')).status).toBe(401)
  })

  it('a foreign Origin with a valid cookie → 403 on every PUT and POST; nothing created or changed', async () => {
    const evil = { origin: 'http://evil.example' }
    const before = await h.db.select().from(devices)
    for (const [method, path, body] of routes().filter(([m]) => m !== 'GET')) {
      const res = await call(h, method, path, { user: h.users.alice, body, headers: evil })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(await res.json()).toEqual(FORBIDDEN_ORIGIN)
    }
    expect(await h.db.select().from(devices)).toEqual(before)
  })
})

describe('devices: ownership through the API', () => {
  it("bob's lists hold none of alice's devices", async () => {
    const { pending, approved } = await lists(h, h.users.bob)
    const ids = [...pending, ...approved].map((d) => d.id)
    expect(ids.length).toBeGreaterThan(0)
    expect(ids).not.toContain(alicePending)
    expect(ids).not.toContain(aliceApproved)
  })

  it("bob's approve, deny and revoke of alice's devices → 404, the same as an unknown id; state unchanged", async () => {
    const unknown = await (await act(h, h.users.bob, crypto.randomUUID(), 'approve')).json()
    const before = [await row(h, alicePending), await row(h, aliceApproved)]
    for (const [id, action] of [
      [alicePending, 'approve'],
      [alicePending, 'deny'],
      [aliceApproved, 'revoke'],
    ]) {
      const res = await act(h, h.users.bob, id, action)
      expect(res.status, `${action} ${id}`).toBe(404)
      expect(await res.json()).toEqual(unknown)
    }
    expect([await row(h, alicePending), await row(h, aliceApproved)]).toEqual(before)
  })
})

describe('devices: the database policy itself', () => {
  it("bob's transaction sees none of alice's rows, even without a where", async () => {
    await expectOwnRowsOnly(h.db, h.users.bob.id, devices)
  })

  it("bob's transaction updates and deletes nothing of alice's", async () => {
    const before = await row(h, alicePending)
    const updated = await withUser(h.db, h.users.bob.id, (tx) =>
      tx.update(devices).set({ status: 'approved' }).where(eq(devices.id, alicePending)).returning(),
    )
    expect(updated).toEqual([])
    // No route deletes devices, so a user may not delete any, not even their own (42501 permission denied).
    await expect(
      withUser(h.db, h.users.bob.id, (tx) => tx.delete(devices).where(eq(devices.id, alicePending)).returning()),
    ).rejects.toMatchObject({ cause: { code: '42501' } })
    expect(await row(h, alicePending)).toEqual(before)
  })

  it('bob cannot insert a device owned by alice, nor move his own device to her', async () => {
    const forged = { userId: h.users.alice.id, name: 'forged-by-bob', status: 'approved' }
    await expect(withUser(h.db, h.users.bob.id, (tx) => tx.insert(devices).values(forged))).rejects.toThrow()
    expect(await h.db.select().from(devices).where(eq(devices.name, 'forged-by-bob'))).toEqual([])

    const { deviceId } = await register(h, h.users.bob, 'bobs')
    await expect(
      withUser(h.db, h.users.bob.id, (tx) => tx.update(devices).set({ userId: h.users.alice.id }).where(eq(devices.id, deviceId))),
    ).rejects.toThrow()
    expect((await row(h, deviceId)).userId).toBe(h.users.bob.id)
  })
})

describe('devices: pairing codes', () => {
  it('200 registrations → 200 distinct codes of [A-Z0-9]{6}, with no visible pattern', async () => {
    const user = await h.seedUser('Many', 'many@example.com')
    const codes: string[] = []
    for (let i = 0; i < 200; i++) codes.push((await register(h, user, `d${i}`)).pairingCode)
    expect(new Set(codes).size).toBe(200)
    for (const code of codes) expect(code).toMatch(/^[A-Z0-9]{6}$/)
    // Not sequential or shared-prefix: consecutive codes differ in most positions.
    const samePositions = codes.slice(1).reduce((n, code, i) => n + [...code].filter((ch, j) => ch === codes[i][j]).length, 0)
    expect(samePositions / (199 * 6)).toBeLessThan(0.1) // 1/36 ≈ 0.03 expected
    // Both letters and digits appear, at every position.
    for (let j = 0; j < 6; j++) {
      const column = codes.map((c) => c[j]).join('')
      expect(column).toMatch(/[A-Z]/)
      expect(column).toMatch(/[0-9]/)
    }
  })
})
