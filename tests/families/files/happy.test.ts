import { beforeAll, describe, expect, it } from 'vitest'
import type { SeededUser } from '../../support/harness'
import { seedAgent } from '../instance/helpers'
import {
  binary,
  BOUNDARY,
  download,
  filesHarness,
  list,
  multipart,
  objectsOf,
  recordsOf,
  remove,
  send,
  STORES,
  streamOf,
  upload,
  usageOf,
} from './helpers'
import { useFixture } from '../../support/harness'

describe.each(STORES)('files on the %s store: the happy paths', (kind) => {
  let alice: SeededUser
  let agentA: string
  let agentB: string
  const h = useFixture(() => filesHarness(kind), { close: (x) => x.closeAll() })
  beforeAll(async () => {
    alice = h.users.alice
    agentA = (await seedAgent(h, alice)).id
    agentB = (await seedAgent(h, alice)).id
  })

  it('POST uploads: 201 {success, file} with the upload names (name, type, uploaded); the bytes count against the quota', async () => {
    const before = await usageOf(h, alice.id)
    const res = await upload(h, alice, agentA, { filename: 'notes.txt', type: 'text/plain', data: 'hello files' })
    expect(res.status).toBe(201)
    const body = await res.json()
    expect(body).toEqual({
      success: true,
      file: { id: expect.any(String), name: 'notes.txt', url: `/api/files?download=${body.file.id}`, size: 11, type: 'text/plain', agentId: agentA, uploaded: expect.any(String) },
    })
    expect(new Date(body.file.uploaded).toISOString()).toBe(body.file.uploaded)
    expect(await usageOf(h, alice.id)).toBe(before + 11)
    const [record] = (await recordsOf(h, alice.id)).filter((r) => r.id === body.file.id)
    expect(record).toMatchObject({ status: 'stored', size: 11, storageKey: `files/${alice.id}/${body.file.id}` })
  })

  it('GET lists the caller’s stored files with the File fields, totalSize and count, newest first; agentId filters', async () => {
    const first = await (await upload(h, alice, agentB, { filename: 'b1.bin', data: binary(300) })).json()
    const second = await (await upload(h, alice, agentB, { filename: 'b2.bin', type: 'application/pdf', data: binary(700) })).json()
    const res = await list(h, alice, `?agentId=${agentB}`)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.count).toBe(2)
    expect(body.totalSize).toBe(1000)
    expect(body.files.map((f: { id: string }) => f.id)).toEqual([second.file.id, first.file.id])
    expect(body.files[0]).toEqual({
      id: second.file.id,
      filename: 'b2.bin',
      url: `/api/files?download=${second.file.id}`,
      size: 700,
      mimeType: 'application/pdf',
      agentId: agentB,
      createdAt: second.file.uploaded,
    })
    const all = await (await list(h, alice)).json()
    expect(all.count).toBe((await recordsOf(h, alice.id, 'stored')).length)
    expect(all.totalSize).toBe(all.files.reduce((n: number, f: { size: number }) => n + f.size, 0))
    expect(all.totalSize).toBe(await usageOf(h, alice.id))
  })

  it('GET ?download= streams the bytes back with exactly Content-Type, Content-Disposition and a real Content-Length', async () => {
    const data = binary(5000)
    const { file } = await (await upload(h, alice, agentA, { filename: 'all-bytes.bin', type: 'application/x-thing', data })).json()
    const res = await download(h, alice, file.id)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/x-thing')
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="all-bytes.bin"')
    expect(res.headers.get('content-length')).toBe('5000')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('cache-control')).toContain('no-store')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(data)
  })

  it('a file with no Content-Type is stored and served as application/octet-stream; a parameterised one as its type/subtype', async () => {
    const plain = await (await upload(h, alice, agentA, { filename: 'x', data: 'x' })).json()
    expect(plain.file.type).toBe('application/octet-stream')
    expect((await download(h, alice, plain.file.id)).headers.get('content-type')).toBe('application/octet-stream')
    const html = await (await upload(h, alice, agentA, { filename: 'p.html', type: 'Text/HTML; charset=utf-8', data: '<p>' })).json()
    expect(html.file.type).toBe('text/html')
    const bad = await (await upload(h, alice, agentA, { filename: 'q', type: 'not a type', data: 'q' })).json()
    expect(bad.file.type).toBe('application/octet-stream')
  })

  it('names are sanitized exactly: leading dots gone, others → _, 128 characters, empty → upload_<timestamp>', async () => {
    const cases: Array<[string | undefined, string | RegExp]> = [
      ['..hidden file (1).txt', 'hidden_file__1_.txt'],
      ['../../etc/passwd', '_.._etc_passwd'],
      ['C:\\\\Users\\\\me\\\\report.pdf', 'C__Users_me_report.pdf'],
      ['naïve 🙂.md', 'na_ve__.md'],
      ['a'.repeat(200) + '.txt', 'a'.repeat(128)],
      ['....', /^upload_\d{13}$/],
      ['', /^upload_\d{13}$/],
      [undefined, /^upload_\d{13}$/],
      ['ok-Name_1.2.tar.gz', 'ok-Name_1.2.tar.gz'],
    ]
    for (const [filename, expected] of cases) {
      const res = await upload(h, alice, agentA, { filename, data: 'n' })
      expect(res.status, String(filename)).toBe(201)
      const { file } = await res.json()
      if (typeof expected === 'string') expect(file.name, String(filename)).toBe(expected)
      else expect(file.name, String(filename)).toMatch(expected)
      expect((await download(h, alice, file.id)).headers.get('content-disposition')).toBe(`attachment; filename="${file.name}"`)
    }
  })

  it('a name given only as RFC 5987 filename* is decoded, then sanitized', async () => {
    const body = new TextEncoder().encode(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="agentId"\r\n\r\n${agentA}\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''caf%C3%A9%20menu.txt\r\n\r\nmenu\r\n--${BOUNDARY}--`,
    )
    const res = await send(h, body, { user: alice })
    expect(res.status).toBe(201)
    expect((await res.json()).file.name).toBe('caf__menu.txt')
  })

  it('an empty file is stored (size 0) and served with Content-Length: 0', async () => {
    const { file } = await (await upload(h, alice, agentA, { filename: 'empty.txt', type: 'text/plain', data: new Uint8Array(0) })).json()
    expect(file.size).toBe(0)
    const res = await download(h, alice, file.id)
    expect(res.headers.get('content-length')).toBe('0')
    expect((await res.arrayBuffer()).byteLength).toBe(0)
  })

  it('a body over the shared 1 MB limit is an upload like any other (this route’s limit is the quota); a trailing slash too', async () => {
    const data = binary(1024 * 1024 + 17)
    for (const path of ['/api/files', '/api/files/']) {
      const res = await send(h, multipart([{ name: 'agentId', value: agentA }, { name: 'file', filename: 'big.bin', data }]), { user: alice, path })
      expect(res.status, path).toBe(201)
      const { file } = await res.json()
      expect(file.size).toBe(data.length)
      expect(Buffer.from(await (await download(h, alice, file.id)).arrayBuffer()).equals(Buffer.from(data))).toBe(true)
    }
  }, 120_000)

  it('an upload past one storage part (9 MiB: two S3 parts of 8 MiB and 1 MiB) round-trips byte for byte', async () => {
    const data = new Uint8Array(9 * 1024 * 1024).map((_, i) => (i * 131 + (i >> 13)) % 256)
    const res = await upload(h, alice, agentA, { filename: 'large.bin', data })
    expect(res.status).toBe(201)
    const { file } = await res.json()
    const back = await download(h, alice, file.id)
    expect(back.headers.get('content-length')).toBe(String(data.length))
    expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(data))).toBe(true)
  }, 120_000)

  it('a streamed body without Content-Length is stored, and the quota settles to the exact size', async () => {
    const before = await usageOf(h, alice.id)
    const data = binary(200_000)
    const res = await upload(h, alice, agentA, { filename: 'chunked.bin', data }, { stream: true })
    expect(res.status).toBe(201)
    expect((await res.json()).file.size).toBe(200_000)
    expect(await usageOf(h, alice.id)).toBe(before + 200_000)
  })

  it('file before agentId (a form built in that order): stored for that agent, byte for byte, the quota exact; streamed too', async () => {
    const before = await usageOf(h, alice.id)
    const data = binary(300_000)
    const body = multipart([{ name: 'file', filename: 'first.bin', type: 'application/x-test', data }, { name: 'note', value: 'x' }, { name: 'agentId', value: agentB }])
    const res = await send(h, body, { user: alice })
    expect(res.status).toBe(201)
    const { file } = await res.json()
    expect(file).toMatchObject({ name: 'first.bin', size: 300_000, type: 'application/x-test', agentId: agentB })
    expect((await recordsOf(h, alice.id)).find((r) => r.id === file.id)).toMatchObject({ status: 'stored', agentId: agentB, size: 300_000 })
    expect(Buffer.from(await (await download(h, alice, file.id)).arrayBuffer()).equals(Buffer.from(data))).toBe(true)
    expect(await usageOf(h, alice.id)).toBe(before + 300_000)
    const listed = await (await list(h, alice, `?agentId=${agentB}`)).json()
    expect(listed.files.map((f: { id: string }) => f.id)).toContain(file.id)
    // Without Content-Length, as a stream in small chunks.
    const streamed = await send(h, streamOf(multipart([{ name: 'file', filename: 's.bin', data: binary(70_000) }, { name: 'agentId', value: agentA }]), 4096), { user: alice })
    expect(streamed.status).toBe(201)
    expect((await streamed.json()).file).toMatchObject({ size: 70_000, agentId: agentA })
    expect(await usageOf(h, alice.id)).toBe(before + 370_000)
  })

  it('other fields, a preamble and an epilogue are ignored', async () => {
    const parts = multipart([
      { name: 'note', value: 'ignored' },
      { name: 'agentId', value: agentA },
      { name: 'file', filename: 'with-extras.txt', type: 'text/plain', data: 'payload' },
      { name: 'after', value: 'ignored too' },
    ])
    const body = new Uint8Array([...new TextEncoder().encode('This is a preamble.\r\n'), ...parts, ...new TextEncoder().encode('epilogue')])
    const res = await send(h, body, { user: alice })
    expect(res.status).toBe(201)
    const { file } = await res.json()
    expect(await (await download(h, alice, file.id)).text()).toBe('payload')
  })

  it('DELETE removes the file: {success, fileId}; not listed, not served, its object gone and its bytes given back', async () => {
    const { file } = await (await upload(h, alice, agentA, { filename: 'gone.txt', data: binary(4321) })).json()
    const before = await usageOf(h, alice.id)
    const objects = (await objectsOf(h, alice.id)).length
    const res = await remove(h, alice, { fileId: file.id })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true, fileId: file.id })
    expect(await usageOf(h, alice.id)).toBe(before - 4321)
    expect((await list(h, alice)).ok).toBe(true)
    expect((await (await list(h, alice)).json()).files.some((f: { id: string }) => f.id === file.id)).toBe(false)
    expect((await download(h, alice, file.id)).status).toBe(404)
    expect((await objectsOf(h, alice.id)).length).toBe(objects - 1)
    expect(await h.services.storage.get(`files/${alice.id}/${file.id}`)).toBeNull()
  })

  it('every stored file has exactly one object, no pending record is left, and usage is the sum of the records', async () => {
    const stored = await recordsOf(h, alice.id, 'stored')
    expect(await recordsOf(h, alice.id, 'pending')).toEqual([])
    expect((await objectsOf(h, alice.id)).length).toBe(stored.length)
    expect(await usageOf(h, alice.id)).toBe(stored.reduce((n, r) => n + r.size, 0))
  })
})
