import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Storage } from '../../lib/storage/types'

/** Behaviour every Storage adapter must share. `get` is a getter because adapters are built in beforeAll. */
export function storageContract(name: string, get: () => Storage) {
  describe(`${name}: Storage contract`, () => {
    // Fresh prefix per test so adapters that share a bucket/dir across tests stay isolated.
    const key = (suffix = 'obj') => `contract-${randomUUID()}/${suffix}`

    it('round-trips binary bytes (0..255) with content type and size', async () => {
      const bytes = new Uint8Array(512).map((_, i) => i % 256)
      const k = key()
      await get().put(k, bytes, 'application/x-test')
      const obj = await get().get(k)
      expect(obj).not.toBeNull()
      expect(obj!.size).toBe(512)
      expect(obj!.contentType).toBe('application/x-test')
      expect(await readAll(obj!.body)).toEqual(bytes)
    })

    it('accepts an ArrayBuffer body', async () => {
      const k = key()
      await get().put(k, new Uint8Array([1, 2, 3]).buffer, 'image/png')
      const obj = await get().get(k)
      expect(await readAll(obj!.body)).toEqual(new Uint8Array([1, 2, 3]))
    })

    it('streams a body spanning many chunks', async () => {
      const bytes = new Uint8Array(1024 * 1024 + 3).map((_, i) => (i * 7) % 256)
      const k = key()
      await get().put(k, bytes, 'application/octet-stream')
      const obj = await get().get(k)
      expect(obj!.size).toBe(bytes.length)
      expect(Buffer.from(await readAll(obj!.body)).equals(Buffer.from(bytes))).toBe(true)
    })

    it('round-trips an empty body', async () => {
      const k = key()
      await get().put(k, new Uint8Array(0), 'text/plain')
      const obj = await get().get(k)
      expect(obj!.size).toBe(0)
      expect((await readAll(obj!.body)).length).toBe(0)
    })

    it('overwrites body and content type', async () => {
      const k = key()
      await get().put(k, new TextEncoder().encode('a much longer first version'), 'text/plain')
      await get().put(k, new Uint8Array([9, 8, 7]), 'image/gif')
      const obj = await get().get(k)
      expect(obj!.contentType).toBe('image/gif')
      expect(obj!.size).toBe(3)
      expect(await readAll(obj!.body)).toEqual(new Uint8Array([9, 8, 7]))
    })

    it('returns null for a missing key', async () => {
      expect(await get().get(key('missing'))).toBeNull()
    })

    it('delete removes the object', async () => {
      const k = key()
      await get().put(k, new Uint8Array([1]), 'text/plain')
      await get().delete(k)
      expect(await get().get(k)).toBeNull()
    })

    it('delete of a missing key resolves', async () => {
      await expect(get().delete(key('never-written'))).resolves.toBeUndefined()
    })

    it('keeps keys with slashes independent', async () => {
      const user = `contract-${randomUUID()}/user-1`
      await get().put(`${user}/file-a`, new Uint8Array([0xa]), 'text/a')
      await get().put(`${user}/file-b`, new Uint8Array([0xb]), 'text/b')
      await get().delete(`${user}/file-a`)
      expect(await get().get(`${user}/file-a`)).toBeNull()
      const b = await get().get(`${user}/file-b`)
      expect(b!.contentType).toBe('text/b')
      expect(await readAll(b!.body)).toEqual(new Uint8Array([0xb]))
      // The "directory" part of a key is not itself an object.
      expect(await get().get(user)).toBeNull()
    })
  })
}

export async function readAll(body: ReadableStream<Uint8Array>) {
  return new Uint8Array(await new Response(body).arrayBuffer())
}
