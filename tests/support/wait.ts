/**
 * Polls `check` (with a short real pause between tries) until it holds, for work that finishes in the background:
 * a queue delivery, a runtime coming up. Throws `<what>: not after <ms> ms` when it never does.
 */
export async function waitFor(check: () => boolean | Promise<boolean>, opts: { ms?: number; every?: number; what?: string } = {}) {
  const { ms = 10_000, every = 50, what = 'condition' } = opts
  const end = Date.now() + ms
  for (;;) {
    if (await check()) return
    if (Date.now() >= end) throw new Error(`${what}: not after ${ms} ms`)
    await new Promise((r) => setTimeout(r, every))
  }
}
