/**
 * A streaming `multipart/form-data` reader (RFC 7578) on web streams only, so it runs the same on Node and on
 * Workers, where `request.formData()` would buffer the whole body. Parts come one at a time; a part's body is a
 * stream the caller reads (or leaves: `next()` skips what is unread), and the reader holds at most one source
 * chunk plus a delimiter's length of it in memory.
 */
export class MultipartError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MultipartError'
  }
}

export interface Part {
  /** The `name` of its `Content-Disposition`. */
  name: string
  /** The `filename` (or RFC 5987 `filename*`) parameter; null when absent (a plain field). */
  filename: string | null
  /** Its own `Content-Type`, as sent (null when absent). */
  contentType: string | null
  body: ReadableStream<Uint8Array>
}

export interface MultipartLimits {
  /** One part's header block. */
  maxHeaderBytes: number
  /** Parts in one body. */
  maxParts: number
  /** Bytes before the first boundary (a preamble, which RFC 2046 allows and which is ignored). */
  maxPreambleBytes: number
}

const DEFAULT_LIMITS: MultipartLimits = { maxHeaderBytes: 8 * 1024, maxParts: 16, maxPreambleBytes: 1024 }

const enc = new TextEncoder()
const CRLF = enc.encode('\r\n')
const HEADER_END = enc.encode('\r\n\r\n')
/** Spaces and tabs allowed after a boundary (RFC 2046 transport padding). */
const MAX_PADDING = 64

/** The boundary of a `multipart/form-data` content type (RFC 2046: 1 to 70 characters), or null. */
export function boundaryOf(contentType: string | null | undefined): string | null {
  if (!contentType) return null
  const [type, ...params] = splitParams(contentType)
  if (type.toLowerCase() !== 'multipart/form-data') return null
  const boundary = params.find(([k]) => k === 'boundary')?.[1]
  if (!boundary || boundary.length > 70 || !/^[0-9A-Za-z'()+_,\-./:=? ]*[0-9A-Za-z'()+_,\-./:=?]$/.test(boundary)) return null
  return boundary
}

/** The bytes a well-formed body spends after its last part's data: `\r\n--boundary--`. */
export const closingDelimiterBytes = (boundary: string) => 6 + enc.encode(boundary).length

type Phase = 'preamble' | 'delimiter' | 'body' | 'done'

export class MultipartReader {
  private readonly source: ReadableStreamDefaultReader<Uint8Array>
  private readonly delimiter: Uint8Array
  private readonly limits: MultipartLimits
  // A virtual CRLF first, so the opening boundary is found like every other delimiter.
  private buf: Uint8Array = CRLF
  private virtualBytes = CRLF.length
  private bytesRead = 0
  private sourceDone = false
  private phase: Phase = 'preamble'
  private parts = 0

  constructor(body: ReadableStream<Uint8Array>, boundary: string, limits: Partial<MultipartLimits> = {}) {
    this.source = body.getReader()
    this.delimiter = enc.encode(`\r\n--${boundary}`)
    this.limits = { ...DEFAULT_LIMITS, ...limits }
  }

  /** Bytes of the body the reader has gone past: after `next()`, where the part's data starts. */
  get consumed() {
    return this.bytesRead + this.virtualBytes - this.buf.length
  }

  /** The next part, or null after the closing boundary. Throws `MultipartError` on a malformed or cut body. */
  async next(): Promise<Part | null> {
    while (this.phase === 'body') await this.bodyChunk() // skip what the caller left unread
    if (this.phase === 'preamble') await this.skipPreamble()
    if (this.phase === 'done') return null
    // Right after `--boundary`: `--` closes the body; else optional padding, CRLF, then the part's headers.
    await this.need(2)
    if (this.buf[0] === 0x2d && this.buf[1] === 0x2d) {
      this.phase = 'done'
      return null
    }
    let at = 0
    for (;;) {
      await this.need(at + 2)
      if (this.buf[at] !== 0x20 && this.buf[at] !== 0x09) break
      if (++at > MAX_PADDING) throw new MultipartError('Malformed multipart body: boundary not followed by a line break')
    }
    if (this.buf[at] !== 0x0d || this.buf[at + 1] !== 0x0a) throw new MultipartError('Malformed multipart body: boundary not followed by a line break')
    this.buf = this.buf.subarray(at)
    // The header block runs from this CRLF to the blank line (at once for a part without headers).
    let end: number
    for (;;) {
      end = indexOf(this.buf, HEADER_END)
      if (end >= 0) break
      if (this.buf.length > this.limits.maxHeaderBytes) throw new MultipartError('Malformed multipart body: part headers too large')
      if (!(await this.fill())) throw new MultipartError('Malformed multipart body: cut off in part headers')
    }
    if (end > this.limits.maxHeaderBytes) throw new MultipartError('Malformed multipart body: part headers too large')
    const headers = parseHeaders(new TextDecoder().decode(this.buf.subarray(CRLF.length, end)))
    this.buf = this.buf.subarray(end + HEADER_END.length)
    if (++this.parts > this.limits.maxParts) throw new MultipartError('Malformed multipart body: too many parts')

    const disposition = headers.get('content-disposition')
    if (!disposition) throw new MultipartError('Malformed multipart body: a part without Content-Disposition')
    const [kind, ...params] = splitParams(disposition)
    const name = params.find(([k]) => k === 'name')?.[1]
    if (kind.toLowerCase() !== 'form-data' || name === undefined) throw new MultipartError('Malformed multipart body: a part without a form-data name')
    const extended = params.find(([k]) => k === 'filename*')?.[1]
    const filename = (extended !== undefined ? decodeExtended(extended) : null) ?? params.find(([k]) => k === 'filename')?.[1] ?? null

    this.phase = 'body'
    return {
      name,
      filename,
      contentType: headers.get('content-type') ?? null,
      body: new ReadableStream<Uint8Array>(
        {
          pull: async (controller) => {
            const chunk = await this.bodyChunk()
            if (chunk) controller.enqueue(chunk)
            else controller.close()
          },
          cancel: (reason) => this.cancel(reason),
        },
        { highWaterMark: 0 },
      ),
    }
  }

  /** Stops reading the request body (an upload refused midway). */
  async cancel(reason?: unknown) {
    this.phase = 'done'
    await this.source.cancel(reason).catch(() => {})
  }

  /**
   * The current part's next bytes, or null once its closing delimiter is reached. Everything but a possible
   * delimiter start at the end of the buffer is handed out at once.
   */
  private async bodyChunk(): Promise<Uint8Array | null> {
    if (this.phase !== 'body') return null
    for (;;) {
      const at = indexOf(this.buf, this.delimiter)
      if (at >= 0) {
        const chunk = this.buf.subarray(0, at)
        this.buf = this.buf.subarray(at + this.delimiter.length)
        this.phase = 'delimiter'
        return chunk.length ? chunk : null
      }
      const safe = this.buf.length - (this.delimiter.length - 1)
      if (safe > 0) {
        const chunk = this.buf.subarray(0, safe)
        this.buf = this.buf.subarray(safe)
        return chunk
      }
      if (!(await this.fill())) throw new MultipartError('Malformed multipart body: cut off before the closing boundary')
    }
  }

  private async skipPreamble() {
    for (;;) {
      const at = indexOf(this.buf, this.delimiter)
      if (at >= 0) {
        this.buf = this.buf.subarray(at + this.delimiter.length)
        this.virtualBytes = 0 // the virtual CRLF is behind us
        this.phase = 'delimiter'
        return
      }
      if (this.buf.length > this.limits.maxPreambleBytes + this.delimiter.length) throw new MultipartError('Malformed multipart body: no boundary')
      if (!(await this.fill())) throw new MultipartError('Malformed multipart body: no boundary')
    }
  }

  private async need(bytes: number) {
    while (this.buf.length < bytes) {
      if (!(await this.fill())) throw new MultipartError('Malformed multipart body: cut off after a boundary')
    }
  }

  /** One more chunk from the source onto the buffer; false at its end. A failing source (a client gone) is a cut body. */
  private async fill(): Promise<boolean> {
    if (this.sourceDone) return false
    let r: ReadableStreamReadResult<Uint8Array>
    try {
      r = await this.source.read()
    } catch (e) {
      if (e instanceof MultipartError) throw e
      throw new MultipartError('Malformed multipart body: the upload was interrupted')
    }
    if (r.done) {
      this.sourceDone = true
      return false
    }
    this.bytesRead += r.value.length
    const joined = new Uint8Array(this.buf.length + r.value.length)
    joined.set(this.buf, 0)
    joined.set(r.value, this.buf.length)
    this.buf = joined
    return true
  }
}

/** First index of `needle` in `hay`, or -1 (native scan for the first byte, then a compare). */
function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  const first = needle[0]
  const last = hay.length - needle.length
  for (let i = hay.indexOf(first); i !== -1 && i <= last; i = hay.indexOf(first, i + 1)) {
    let j = 1
    while (j < needle.length && hay[i + j] === needle[j]) j++
    if (j === needle.length) return i
  }
  return -1
}

/** Header lines (`Name: value`), names lower-cased; a folded line continues the previous one. */
function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>()
  let lastName: string | null = null
  for (const line of block.split('\r\n')) {
    if (!line) continue
    if ((line[0] === ' ' || line[0] === '\t') && lastName) {
      headers.set(lastName, `${headers.get(lastName)} ${line.trim()}`)
      continue
    }
    const colon = line.indexOf(':')
    if (colon <= 0) throw new MultipartError('Malformed multipart body: a malformed part header')
    lastName = line.slice(0, colon).trim().toLowerCase()
    headers.set(lastName, line.slice(colon + 1).trim())
  }
  return headers
}

/**
 * `value; key=token; key="quoted"` as `[value, [key, value]...]`, keys lower-cased. In a quoted string `\"` and
 * `\\` are escapes; any other backslash is kept (browsers send Windows paths unescaped).
 */
function splitParams(header: string): [string, ...Array<[string, string]>] {
  let i = header.indexOf(';')
  const value = (i < 0 ? header : header.slice(0, i)).trim()
  const params: Array<[string, string]> = []
  if (i < 0) return [value, ...params]
  while (i < header.length) {
    while (i < header.length && (header[i] === ';' || header[i] === ' ' || header[i] === '\t')) i++
    const eq = header.indexOf('=', i)
    if (eq < 0) break
    const key = header.slice(i, eq).trim().toLowerCase()
    i = eq + 1
    while (header[i] === ' ' || header[i] === '\t') i++
    let v = ''
    if (header[i] === '"') {
      i++
      while (i < header.length && header[i] !== '"') {
        if (header[i] === '\\' && (header[i + 1] === '"' || header[i + 1] === '\\')) i++
        v += header[i++]
      }
      i++ // the closing quote
      const next = header.indexOf(';', i)
      i = next < 0 ? header.length : next
    } else {
      const next = header.indexOf(';', i)
      v = (next < 0 ? header.slice(i) : header.slice(i, next)).trim()
      i = next < 0 ? header.length : next
    }
    if (key) params.push([key, v])
  }
  return [value, ...params]
}

/** An RFC 5987 value (`UTF-8''caf%C3%A9.txt`), or null when it is not one this reader can decode. */
function decodeExtended(value: string): string | null {
  const m = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(value)
  if (!m || !/^utf-8$/i.test(m[1])) return null
  try {
    return decodeURIComponent(m[2])
  } catch {
    return null
  }
}
