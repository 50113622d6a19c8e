/** A bound on one call to a dependency: see `deadline`. */
export interface Deadline {
  /** Aborts when the time is up or the outer signal aborts, whichever comes first. */
  readonly signal: AbortSignal
  /** True once the time ran out (not when the outer signal aborted). */
  readonly timedOut: boolean
  /** Stops the timer and lets go of the outer signal: call it when the call is over (in `finally`). */
  clear(): void
}

/**
 * The one way to bound a call in time: a signal that aborts after `ms`, or when `outer` (a caller's own
 * cancellation) aborts first. The caller holds the controller and its timer for the call's life, unlike a signal
 * composed by `AbortSignal.any`, which Node 20 can collect before it fires, leaving the call waiting for ever.
 */
export function deadline(ms: number, outer?: AbortSignal): Deadline {
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort(new DOMException(`No answer within ${ms} ms`, 'TimeoutError'))
  }, ms)
  const onOuter = () => controller.abort(outer?.reason)
  if (outer?.aborted) onOuter()
  else outer?.addEventListener('abort', onOuter, { once: true })
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut
    },
    clear() {
      clearTimeout(timer)
      outer?.removeEventListener('abort', onOuter)
    },
  }
}
