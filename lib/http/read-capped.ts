/**
 * A response body as bytes, read at most `maxBytes` deep: a peer we do not control (an agent's runtime, a gateway
 * plugin) cannot make the platform buffer more than that, however much it sends. Answers null when the body is
 * larger (the rest is cancelled, never read).
 */
export async function readCappedBytes(res: Response, maxBytes: number): Promise<Uint8Array | null> {
  if (!res.body) return new Uint8Array()
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    all.set(c, at)
    at += c.byteLength
  }
  return all
}

/** `readCappedBytes` as UTF-8 text (null when over `maxBytes`). */
export async function readCapped(res: Response, maxBytes: number): Promise<string | null> {
  const bytes = await readCappedBytes(res, maxBytes)
  return bytes === null ? null : new TextDecoder().decode(bytes)
}
