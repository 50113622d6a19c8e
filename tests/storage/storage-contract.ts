import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Storage } from '../../lib/context'

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

    it('putStream writes a many-chunk body of unknown length and answers its size', async () => {
      const k = key()
      const chunks = Array.from({ length: 40 }, (_, i) => new Uint8Array(1000 + i).fill(i))
      const { size } = await get().putStream(k, streamOf(chunks), 'application/x-chunks')
      const expected = concatAll(chunks)
      expect(size).toBe(expected.length)
      const obj = await get().get(k)
      expect(obj!.size).toBe(expected.length)
      expect(obj!.contentType).toBe('application/x-chunks')
      expect(Buffer.from(await readAll(obj!.body)).equals(Buffer.from(expected))).toBe(true)
    })

    it('putStream of several multipart parts (11 MiB), and of exactly two parts (10 MiB), round-trips', async () => {
      for (const total of [11 * MiB, 10 * MiB]) {
        const k = key()
        const { size } = await get().putStream(k, patternStream(total, 256 * 1024), 'application/octet-stream')
        expect(size).toBe(total)
        const obj = await get().get(k)
        expect(obj!.size).toBe(total)
        const back = await readAll(obj!.body)
        expect(back.length).toBe(total)
        expect(back.every((b, i) => b === pattern(i))).toBe(true)
      }
    }, 60_000)

    it('putStream of an empty stream stores an empty object', async () => {
      const k = key()
      expect(await get().putStream(k, streamOf([]), 'text/plain')).toEqual({ size: 0 })
      expect((await get().get(k))!.size).toBe(0)
    })

    it('putStream whose source fails leaves no object, small or past the first part', async () => {
      for (const before of [3, 6 * MiB]) {
        const k = key()
        const failing = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new Uint8Array(before).fill(1))
          },
          pull(c) {
            c.error(new Error('client went away'))
          },
        })
        await expect(get().putStream(k, failing, 'text/plain')).rejects.toThrow('client went away')
        expect(await get().get(k)).toBeNull()
      }
    }, 60_000)

    it('putStream over an existing object replaces it only on success', async () => {
      const k = key()
      await get().put(k, new Uint8Array([1, 2, 3]), 'text/old')
      const failing = new ReadableStream<Uint8Array>({ pull: (c) => c.error(new Error('cut')) })
      await expect(get().putStream(k, failing, 'text/new')).rejects.toThrow('cut')
      const kept = await get().get(k)
      expect(kept!.contentType).toBe('text/old')
      expect(await readAll(kept!.body)).toEqual(new Uint8Array([1, 2, 3]))
      await get().putStream(k, streamOf([new Uint8Array([4])]), 'text/new')
      expect(await readAll((await get().get(k))!.body)).toEqual(new Uint8Array([4]))
    })

    it('refuses keys that could name something outside the store, on every method', async () => {
      for (const k of ['', '..', '../x', 'a/../b', '/abs', 'a//b', 'a/./b', 'trailing/', 'back\\slash', 'nul\0']) {
        await expect(get().put(k, new Uint8Array([1]), 'text/plain'), k).rejects.toThrow(/invalid key/)
        await expect(get().putStream(k, streamOf([new Uint8Array([1])]), 'text/plain'), k).rejects.toThrow(/invalid key/)
        await expect(get().get(k), k).rejects.toThrow(/invalid key/)
        await expect(get().delete(k), k).rejects.toThrow(/invalid key/)
      }
    })
  })
}

export async function readAll(body: ReadableStream<Uint8Array>) {
  return new Uint8Array(await new Response(body).arrayBuffer())
}

const MiB = 1024 * 1024

/** Byte `i` of the generated bodies: not periodic on any power of two, so a misplaced part shows. */
export const pattern = (i: number) => (i * 31 + Math.floor(i / 251)) % 256

/** A stream of `total` generated bytes in chunks of `chunk`, made as read (never all in memory at once). */
export function patternStream(total: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= total) return c.close()
      const n = Math.min(chunk, total - at)
      const bytes = new Uint8Array(n)
      for (let j = 0; j < n; j++) bytes[j] = pattern(at + j)
      at += n
      c.enqueue(bytes)
    },
  })
}

export function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(chunks[i++])
      else c.close()
    },
  })
}

function concatAll(chunks: Uint8Array[]) {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  return out
}
