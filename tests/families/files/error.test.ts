import { beforeAll, describe, expect, it } from 'vitest'
import { files } from '../../../schema'
import type { SeededUser } from '../../support/harness'
import { seedAgent } from '../instance/helpers'
import {
  binary,
  BOUNDARY,
  concat,
  download,
  filesHarness,
  list,
  multipart,
  objectsOf,
  recordsOf,
  remove,
  send,
  STORES,
  upload,
  usageOf,
} from './helpers'
import { useFixture } from '../../support/harness'

const enc = new TextEncoder()

describe.each(STORES)('files on the %s store: errors', (kind) => {
  let alice: SeededUser
  let agent: string
  const h = useFixture(() => filesHarness(kind), { close: (x) => x.closeAll() })
  beforeAll(async () => {
    alice = h.users.alice
    agent = (await seedAgent(h, alice)).id
  })

  /** Nothing of a refused upload is left: no record (pending or stored), no object, no bytes counted. */
  async function nothingLeft() {
    expect(await recordsOf(h, alice.id)).toEqual([])
    expect(await objectsOf(h, alice.id)).toEqual([])
    expect(await usageOf(h, alice.id)).toBe(0)
  }

  const expectError = async (res: Response, status: number, body: Record<string, unknown>) => {
    const json = await res.json()
    expect(res.status, JSON.stringify(json)).toBe(status)
    expect(json).toMatchObject(body)
  }

  describe('POST /api/files: the body', () => {
    it('another Content-Type, or multipart without a boundary → 400 MALFORMED_MULTIPART', async () => {
      const body = multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'a.txt', data: 'a' }])
      for (const contentType of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/mixed; boundary=x', 'multipart/form-data', 'multipart/form-data; boundary=', `multipart/form-data; boundary=${'b'.repeat(71)}`]) {
        await expectError(await send(h, body, { user: alice, contentType }), 400, {
          error: 'Content-Type must be multipart/form-data with a boundary',
          code: 'MALFORMED_MULTIPART',
        })
      }
      await expectError(await send(h, body, { user: alice, headers: { 'content-type': '' } }), 400, { code: 'MALFORMED_MULTIPART' })
      await nothingLeft()
    })

    it('a quoted boundary and upper-case media type are accepted', async () => {
      const res = await send(h, multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'q.txt', data: 'q' }]), {
        user: alice,
        contentType: `Multipart/Form-Data; charset=utf-8; boundary="${BOUNDARY}"`,
      })
      expect(res.status).toBe(201)
      const { file } = await res.json()
      expect((await remove(h, alice, { fileId: file.id })).status).toBe(200)
    })

    it('missing agentId (also after a file), missing file, two files, two agentIds → 400 VALIDATION with issues; a file sent first is not kept', async () => {
      const file = { name: 'file', filename: 'f.txt', data: 'f' }
      const cases: Array<[Parameters<typeof multipart>[0], string, string]> = [
        [[file], 'agentId is required', 'agentId'],
        [[file, { name: 'other', value: 'x' }], 'agentId is required', 'agentId'],
        [[{ name: 'agentId', value: agent }], 'file is required', 'file'],
        [[{ name: 'other', value: 'x' }], 'agentId is required', 'agentId'],
        [[], 'agentId is required', 'agentId'],
        [[file, { name: 'agentId', value: '   ' }], 'agentId is required', 'agentId'],
        [[file, { name: 'agentId', value: agent }, { name: 'agentId', value: agent }], 'agentId must be given once', 'agentId'],
        [[file, { name: 'agentId', value: agent }, file], 'Only one file per upload', 'file'],
        [[{ name: 'agentId', value: agent }, file, file], 'Only one file per upload', 'file'],
        [[{ name: 'agentId', value: agent }, { name: 'agentId', value: agent }, file], 'agentId must be given once', 'agentId'],
        [[{ name: 'agentId', value: '   ' }, file], 'agentId is required', 'agentId'],
        [[{ name: 'agentId', value: 'x'.repeat(300) }, file], 'agentId is too long', 'agentId'],
        [[{ name: 'agentId', value: 'a\u0000b' }, file], 'Text must not contain NUL or unpaired surrogate characters', 'agentId'],
      ]
      for (const [parts, error, path] of cases) {
        await expectError(await send(h, multipart(parts), { user: alice }), 400, { error, code: 'VALIDATION', issues: [{ path, message: error }] })
      }
      await nothingLeft()
    })

    it('an agentId that is not valid UTF-8 → 400', async () => {
      const body = concat([
        enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="agentId"\r\n\r\n`),
        new Uint8Array([0xff, 0xfe]),
        enc.encode(`\r\n--${BOUNDARY}--\r\n`),
      ])
      await expectError(await send(h, body, { user: alice }), 400, { error: 'agentId must be UTF-8 text', code: 'VALIDATION' })
    })

    it('a body cut off in the file (no closing boundary) → 400, nothing stored, the reservation given back', async () => {
      const whole = multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'cut.bin', data: binary(100_000) }])
      const cut = whole.subarray(0, 60_000)
      // The connection ends early, with or without the whole body's Content-Length announced.
      for (const headers of [{ 'content-length': String(whole.length) }, {}] as Record<string, string>[]) {
        const res = await send(h, cut, { user: alice, stream: true, headers })
        await expectError(res, 400, { error: 'Malformed multipart body: cut off before the closing boundary', code: 'MALFORMED_MULTIPART' })
      }
      // A complete request whose body simply never closes.
      await expectError(await send(h, cut, { user: alice }), 400, {
        error: 'Malformed multipart body: no closing boundary within its Content-Length',
        code: 'MALFORMED_MULTIPART',
      })
      await nothingLeft()
    })

    it('a body cut off after the file’s delimiter, before the closing `--` → 400, the written object deleted', async () => {
      const whole = multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'cut.bin', data: binary(50_000) }])
      const cut = whole.subarray(0, whole.length - 4) // `--\r\n` missing
      await expectError(await send(h, cut, { user: alice }), 400, { code: 'MALFORMED_MULTIPART' })
      await nothingLeft()
    })

    it('a stream that fails midway (a client gone) → 400, nothing stored', async () => {
      const head = multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'gone.bin', data: binary(40_000) }]).subarray(0, 30_000)
      let sent = false
      const failing = new ReadableStream<Uint8Array>({
        pull(c) {
          if (!sent) {
            sent = true
            c.enqueue(head)
          } else c.error(new Error('socket hang up'))
        },
      })
      await expectError(await send(h, failing, { user: alice }), 400, { error: 'Malformed multipart body: the upload was interrupted', code: 'MALFORMED_MULTIPART' })
      await nothingLeft()
    })

    it('a body longer than its Content-Length → 400, nothing stored', async () => {
      const body = multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'long.bin', data: binary(20_000) }])
      const res = await send(h, body, { user: alice, headers: { 'content-length': String(body.length - 5_000) } })
      await expectError(res, 400, { error: 'Malformed multipart body: no closing boundary within its Content-Length', code: 'MALFORMED_MULTIPART' })
      await nothingLeft()
    })

    it('garbage, no boundary line, oversized part headers, a part without a name, too many parts → 400', async () => {
      const bodies: Array<[Uint8Array, string]> = [
        [enc.encode('not multipart at all'), 'Malformed multipart body: no boundary'],
        [enc.encode(`--${BOUNDARY}xx\r\n`), 'Malformed multipart body: boundary not followed by a line break'],
        [enc.encode(`--${BOUNDARY}\r\nX: ${'h'.repeat(10_000)}\r\n\r\nv\r\n--${BOUNDARY}--`), 'Malformed multipart body: part headers too large'],
        [enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nv\r\n--${BOUNDARY}--`), 'Malformed multipart body: a part without a form-data name'],
        [enc.encode(`--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nv\r\n--${BOUNDARY}--`), 'Malformed multipart body: a part without Content-Disposition'],
        [enc.encode(`--${BOUNDARY}\r\nno colon here\r\n\r\nv\r\n--${BOUNDARY}--`), 'Malformed multipart body: a malformed part header'],
        [multipart(Array.from({ length: 17 }, () => ({ name: 'x', value: 'y' }))), 'Malformed multipart body: too many parts'],
        [enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="agentId"\r\n`), 'Malformed multipart body: cut off in part headers'],
        [new Uint8Array(0), 'Malformed multipart body: no boundary'],
        [multipart([{ name: 'pad', value: 'p'.repeat(60_000) }, { name: 'pad2', value: 'p'.repeat(10_000) }, { name: 'agentId', value: agent }, { name: 'file', filename: 'f', data: 'f' }]), 'The fields before file take more than 64 KiB'],
        [multipart([{ name: 'agentId', value: agent }, { name: 'file', filename: 'f', data: 'f' }, { name: 'after', value: 'a'.repeat(70_000) }]), 'The field "after" is over 64 KiB'],
      ]
      for (const [body, error] of bodies) {
        await expectError(await send(h, body, { user: alice }), 400, { error, code: 'MALFORMED_MULTIPART' })
      }
      await nothingLeft()
    })

    it('an agentId that is not one of the caller’s agents → 404 `Agent not found`, before any byte of the file is stored', async () => {
      for (const agentId of [crypto.randomUUID(), 'not-an-id', (await seedAgent(h, h.users.bob)).id]) {
        await expectError(await upload(h, alice, agentId, { filename: 'a.txt', data: binary(10_000) }), 404, { error: 'Agent not found', code: 'NOT_FOUND' })
      }
      await nothingLeft()
      expect(await usageOf(h, h.users.bob.id)).toBe(0)
    })

    it('the same agentIds after the file → 404: the file written first is deleted and its bytes given back', async () => {
      for (const agentId of [crypto.randomUUID(), 'not-an-id', (await seedAgent(h, h.users.bob)).id]) {
        const body = multipart([{ name: 'file', filename: 'first.bin', data: binary(50_000) }, { name: 'agentId', value: agentId }])
        await expectError(await send(h, body, { user: alice }), 404, { error: 'Agent not found', code: 'NOT_FOUND' })
      }
      await nothingLeft()
      expect(await usageOf(h, h.users.bob.id)).toBe(0)
      expect(await recordsOf(h, h.users.bob.id)).toEqual([])
    })

    it('an agent deleted while its file uploads → 404, nothing kept', async () => {
      const doomed = await seedAgent(h, alice)
      const body = multipart([{ name: 'agentId', value: doomed.id }, { name: 'file', filename: 'late.bin', data: binary(30_000) }])
      const split = body.length - 10_000
      let step = 0
      const { agents } = await import('../../../schema')
      const { eq } = await import('drizzle-orm')
      const slow = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (step === 0) c.enqueue(body.subarray(0, split))
          else if (step === 1) {
            // Once the upload has reserved its bytes (its pending record exists), the agent goes: the record loses it.
            for (let i = 0; i < 100 && (await recordsOf(h, alice.id, 'pending')).length === 0; i++) await new Promise((r) => setTimeout(r, 50))
            await h.db.delete(agents).where(eq(agents.id, doomed.id))
            c.enqueue(body.subarray(split))
          } else c.close()
          step++
        },
      })
      await expectError(await send(h, slow, { user: alice }), 404, { error: 'Agent not found' })
      // A record without its agent is never stored: the upload deleted its object, then the record and its bytes.
      expect(await recordsOf(h, alice.id)).toEqual([])
      expect(await objectsOf(h, alice.id)).toEqual([])
      expect(await usageOf(h, alice.id)).toBe(0)
      const { file } = await (await upload(h, alice, agent, { filename: 'next.txt', data: 'n' })).json()
      expect(await usageOf(h, alice.id)).toBe(1)
      expect((await remove(h, alice, { fileId: file.id })).status).toBe(200)
      await nothingLeft()
    })
  })

  describe('GET /api/files', () => {
    it('an unknown download id → 404 `File not found`', async () => {
      for (const id of [crypto.randomUUID(), 'nope', 'a.b']) {
        await expectError(await download(h, alice, id), 404, { error: 'File not found', code: 'NOT_FOUND' })
      }
    })

    it('a download id that is a path → 403 `Path outside upload directory`, never looked up', async () => {
      const ids = ['../secret', '../../etc/passwd', '..', '.', 'a/b', '/etc/passwd', '..\\..\\win.ini', `${crypto.randomUUID()}/..`, 'x..y']
      for (const id of ids) {
        await expectError(await download(h, alice, id), 403, { error: 'Path outside upload directory', code: 'PATH_OUTSIDE_UPLOADS' })
      }
      // Percent-encoded separators arrive decoded in the query: the same answer.
      const res = await h.web.request('/api/files?download=..%2F..%2Fetc%2Fpasswd', { headers: { cookie: alice.cookie } })
      expect(res.status).toBe(403)
    })

    it('a record whose object lies outside the caller’s prefix → 403', async () => {
      const id = crypto.randomUUID()
      for (const storageKey of [`files/${h.users.bob.id}/${crypto.randomUUID()}`, `files/${alice.id}/../${h.users.bob.id}/x`, `files/${alice.id}/a/b`, 'elsewhere/x']) {
        await h.db.delete(files).where((await import('drizzle-orm')).eq(files.id, id))
        await h.db.insert(files).values({ id, userId: alice.id, agentId: agent, filename: 'x', storageKey, size: 8, mimeType: 'text/plain', status: 'stored' })
        await expectError(await download(h, alice, id), 403, { code: 'PATH_OUTSIDE_UPLOADS' })
      }
      await h.db.delete(files).where((await import('drizzle-orm')).eq(files.id, id))
    })

    it('a stored file whose object has gone → 404, and the record is removed with its bytes given back', async () => {
      const { file } = await (await upload(h, alice, agent, { filename: 'vanishing.txt', data: binary(777) })).json()
      const before = await usageOf(h, alice.id)
      await h.services.storage.delete(`files/${alice.id}/${file.id}`)
      await expectError(await download(h, alice, file.id), 404, { error: 'File not found', code: 'NOT_FOUND' })
      expect(await usageOf(h, alice.id)).toBe(before - 777)
      expect((await recordsOf(h, alice.id)).some((r) => r.id === file.id)).toBe(false)
      await expectError(await download(h, alice, file.id), 404, { error: 'File not found' })
    })

    it('a pending (still uploading) file is neither listed nor served', async () => {
      const id = crypto.randomUUID()
      await h.db.insert(files).values({ id, userId: alice.id, agentId: agent, filename: 'p', storageKey: `files/${alice.id}/${id}`, size: 1, mimeType: 'text/plain', status: 'pending' })
      await h.services.storage.put(`files/${alice.id}/${id}`, new Uint8Array([1]), 'text/plain')
      expect((await (await list(h, alice)).json()).files.some((f: { id: string }) => f.id === id)).toBe(false)
      await expectError(await download(h, alice, id), 404, { error: 'File not found' })
      await expectError(await remove(h, alice, { fileId: id }), 404, { error: 'File not found' })
      await h.db.delete(files).where((await import('drizzle-orm')).eq(files.id, id))
      await h.services.storage.delete(`files/${alice.id}/${id}`)
    })

    it('a list for an unknown agent is empty, not an error', async () => {
      const res = await list(h, alice, `?agentId=${crypto.randomUUID()}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ files: [], totalSize: 0, count: 0 })
    })

    it('query values past their bounds → 400 VALIDATION', async () => {
      expect((await list(h, alice, `?agentId=${'a'.repeat(300)}`)).status).toBe(400)
      expect((await list(h, alice, `?download=${'a'.repeat(300)}`)).status).toBe(400)
      expect((await list(h, alice, '?download=')).status).toBe(400)
    })
  })

  describe('DELETE /api/files', () => {
    it('missing or empty fileId → 400 `fileId is required`; invalid JSON → 400 INVALID_JSON', async () => {
      for (const body of [{}, { fileId: '' }, { fileId: 5 }]) {
        await expectError(await remove(h, alice, body), 400, { error: 'fileId is required', code: 'VALIDATION' })
      }
      await expectError(await remove(h, alice, '{"fileId":'), 400, { error: 'Invalid JSON body', code: 'INVALID_JSON' })
    })

    it('an unknown fileId → 404 `File not found`; deleting twice → the second is 404', async () => {
      await expectError(await remove(h, alice, { fileId: crypto.randomUUID() }), 404, { error: 'File not found', code: 'NOT_FOUND' })
      const { file } = await (await upload(h, alice, agent, { filename: 'twice.txt', data: 'x' })).json()
      expect((await remove(h, alice, { fileId: file.id })).status).toBe(200)
      await expectError(await remove(h, alice, { fileId: file.id }), 404, { error: 'File not found' })
    })
  })
})
