import { fc, it as prop } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { boundaryOf, closingDelimiterBytes, MultipartError, MultipartReader } from '../../../functions/files/multipart'

/** The streaming multipart reader on its own: any chunking of a body gives the same parts. */
const enc = new TextEncoder()
const B = 'XyZ-boundary-42'

function chunked(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const pieces: Uint8Array[] = []
  let at = 0
  for (const p of [...points, bytes.length]) {
    if (p > at) pieces.push(bytes.slice(at, p))
    at = Math.max(at, p)
  }
  let i = 0
  return new ReadableStream({ pull: (c) => (i < pieces.length ? c.enqueue(pieces[i++]) : c.close()) })
}

async function readAll(body: ReadableStream<Uint8Array>) {
  return new Uint8Array(await new Response(body).arrayBuffer())
}

async function parse(body: ReadableStream<Uint8Array>, boundary = B) {
  const reader = new MultipartReader(body, boundary)
  const parts: Array<{ name: string; filename: string | null; contentType: string | null; data: Uint8Array }> = []
  for (let p = await reader.next(); p; p = await reader.next()) parts.push({ name: p.name, filename: p.filename, contentType: p.contentType, data: await readAll(p.body) })
  return parts
}

const build = (parts: Array<{ name: string; filename?: string; data: Uint8Array }>, boundary = B) => {
  const out: number[] = []
  for (const p of parts) {
    out.push(...enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n\r\n`), ...p.data, ...enc.encode('\r\n'))
  }
  out.push(...enc.encode(`--${boundary}--\r\n`))
  return new Uint8Array(out)
}

describe('MultipartReader', () => {
  // Data made of the delimiter's own pieces, so near-matches straddle every chunk boundary.
  const tricky = fc.array(fc.constantFrom('\r', '\n', '-', '--', `--${B.slice(0, 5)}`, `\r\n--${B.slice(0, -1)}`, 'x', '\u00e9'), { maxLength: 40 }).map((a) => enc.encode(a.join('')))

  prop.prop([fc.array(fc.record({ name: fc.constantFrom('a', 'file', 'agentId'), data: fc.oneof(tricky, fc.uint8Array({ maxLength: 300 })) }), { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 30 })])(
    'any chunking of any body gives back exactly its parts',
    async (parts, cuts) => {
      const body = build(parts)
      const got = await parse(chunked(body, cuts))
      expect(got.map((p) => p.name)).toEqual(parts.map((p) => p.name))
      got.forEach((p, i) => expect(Buffer.from(p.data).equals(Buffer.from(parts[i].data))).toBe(true))
    },
  )

  prop.prop([fc.uint8Array({ minLength: 1, maxLength: 2000 }), fc.array(fc.nat(), { maxLength: 20 })])('a body cut anywhere before its end is refused, never returned as complete', async (data, cuts) => {
    const body = build([{ name: 'file', filename: 'f', data }])
    // Anything short of `--boundary--` complete (only the final CRLF, an epilogue, may go).
    const cut = body.subarray(0, (cuts[0] ?? 0) % (body.length - 2))
    await expect(parse(chunked(cut, cuts))).rejects.toBeInstanceOf(MultipartError)
  })

  it('parts left unread are skipped; `consumed` is where the part’s data starts', async () => {
    const body = build([
      { name: 'skip', data: enc.encode('s'.repeat(1000)) },
      { name: 'file', filename: 'f.bin', data: enc.encode('DATA') },
    ])
    const reader = new MultipartReader(chunked(body, [3, 100, 500, 1030]), B)
    expect((await reader.next())!.name).toBe('skip')
    const file = (await reader.next())!
    expect(file.filename).toBe('f.bin')
    const start = reader.consumed
    expect(new TextDecoder().decode(body.subarray(start, start + 4))).toBe('DATA')
    // The file's data, its closing delimiter and the final CRLF are the rest of the body.
    expect(body.length - start).toBe(4 + closingDelimiterBytes(B) + 2)
    expect(new TextDecoder().decode(await readAll(file.body))).toBe('DATA')
    expect(await reader.next()).toBeNull()
  })

  it('reads quoted parameters with escapes, unquoted tokens, filename* (preferred), folded headers and padding after boundaries', async () => {
    const body = enc.encode(
      `preamble\r\n--${B}  \t\r\ncontent-disposition: FORM-DATA ; name=plain; filename="a \\"q\\" b\\\\c\\d.txt"\r\nContent-Type: text/plain;\r\n charset=utf-8\r\n\r\nv1\r\n` +
        `--${B}\r\nContent-Disposition: form-data; name="ext"; filename="fallback.txt"; filename*=utf-8''na%C3%AFve.txt\r\n\r\nv2\r\n--${B}--`,
    )
    const [plain, ext] = await parse(chunked(body, [1, 7, 40]))
    expect(plain).toMatchObject({ name: 'plain', filename: 'a "q" b\\c\\d.txt', contentType: 'text/plain; charset=utf-8' })
    expect(ext.filename).toBe('naïve.txt')
  })

  it('refuses oversized headers, too many parts and an endless preamble, without buffering them', async () => {
    const endless = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new Uint8Array(64 * 1024).fill(0x61)) })
    await expect(parse(endless)).rejects.toThrow('no boundary')
    const header = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(enc.encode(`--${B}\r\nX: `)),
      pull: (c) => c.enqueue(new Uint8Array(64 * 1024).fill(0x61)),
    })
    await expect(parse(header)).rejects.toThrow('part headers too large')
    await expect(parse(chunked(build(Array.from({ length: 17 }, () => ({ name: 'p', data: new Uint8Array(0) }))), []))).rejects.toThrow('too many parts')
    const padding = enc.encode(`--${B}${' '.repeat(100)}\r\n`)
    await expect(parse(chunked(padding, []))).rejects.toThrow('not followed by a line break')
  })

  it('boundaryOf: multipart/form-data with a 1–70 character boundary, quoted or not; anything else null', () => {
    expect(boundaryOf(`multipart/form-data; boundary=${B}`)).toBe(B)
    expect(boundaryOf(`Multipart/Form-Data;charset=utf-8;boundary="a b'c"`)).toBe("a b'c")
    expect(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(70)}`)).toBe('x'.repeat(70))
    for (const bad of [undefined, '', 'multipart/form-data', 'multipart/form-data; boundary=', `multipart/form-data; boundary=${'x'.repeat(71)}`, 'multipart/mixed; boundary=x', 'text/plain; boundary=x', 'multipart/form-data; boundary="ends with space "', 'multipart/form-data; boundary=semi;colon']) {
      expect(boundaryOf(bad), String(bad)).toBe(bad === 'multipart/form-data; boundary=semi;colon' ? 'semi' : null)
    }
  })
})
