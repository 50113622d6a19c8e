import { deadline } from '../../lib/deadline'
import { readCappedBytes } from '../../lib/http/read-capped'
import { ApiError } from '../../lib/http/errors'
import type { Plugin } from './plugins'

/** The most of a plugin's non-streamed answer the gateway relays (it is read whole before it is answered). */
export const MAX_PLUGIN_ANSWER_BYTES = 10 * 1024 * 1024
// Statuses whose response cannot carry a body.
const NULL_BODY = new Set([101, 204, 205, 304])

/** A plugin's answer as the gateway relays it. `served` is false when the plugin failed (5xx): the call is refunded. */
export interface PluginAnswer {
  status: number
  contentType: string | null
  /** An event stream, passed through as it arrives; else the whole body. */
  body: ReadableStream<Uint8Array> | Uint8Array | null
  streamed: boolean
  served: boolean
}

/** 502 `no_plugin`: the plugin cannot serve the call (no upstream, no answer in time, a broken answer). */
export const pluginUnavailable = (why: string) => new ApiError('NO_PLUGIN', `The plugin is unavailable: ${why}`)

const isEventStream = (contentType: string | null) => !!contentType && /^text\/event-stream\b/i.test(contentType)

class Idle extends Error {}

/**
 * `source`, ending when no chunk arrives for `idleMs`: closed (`onIdle: 'close'`, a stream already being relayed)
 * or failed with `Idle` (`'error'`, a body being read whole). Cancelling it cancels the upstream.
 */
function idleLimited(source: ReadableStream<Uint8Array>, idleMs: number, onIdle: 'close' | 'error'): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined
      const idle = new Promise<'idle'>((resolve) => {
        timer = setTimeout(() => resolve('idle'), idleMs)
      })
      const next = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer))
      if (next === 'idle') {
        reader.cancel().catch(() => {})
        if (onIdle === 'close') controller.close()
        else controller.error(new Idle())
      } else if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
}

/**
 * POSTs `payload` as JSON to the plugin's upstream with the caller's `Accept` and nothing else of the request
 * (never its cookies or `Authorization`); redirects are not followed. Headers must arrive within `timeoutMs`,
 * else 502 `no_plugin`; an event stream (2xx-4xx) is passed through unbuffered and ends after `timeoutMs` without
 * a chunk; any other body is read whole, capped at `MAX_PLUGIN_ANSWER_BYTES`, with the same idle limit.
 */
export async function callPlugin(plugin: Plugin & { url: string }, payload: Record<string, unknown>, opts: { accept?: string; timeoutMs: number }): Promise<PluginAnswer> {
  // Bounds the wait for the headers only: the body has its own idle limit (`idleLimited`).
  const headersDue = deadline(opts.timeoutMs)
  let res: Response
  try {
    res = await fetch(plugin.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: opts.accept || '*/*' },
      body: JSON.stringify(payload),
      redirect: 'manual',
      signal: headersDue.signal,
    })
  } catch {
    throw pluginUnavailable(headersDue.timedOut ? `no answer within ${opts.timeoutMs / 1000} s` : 'its upstream could not be reached')
  } finally {
    headersDue.clear()
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => {})
    throw pluginUnavailable('its upstream answered with a redirect')
  }
  const contentType = res.headers.get('content-type')
  const served = res.status < 500
  if (NULL_BODY.has(res.status) || !res.body) {
    await res.body?.cancel().catch(() => {})
    return { status: res.status, contentType, body: null, streamed: false, served }
  }
  if (served && isEventStream(contentType)) {
    return { status: res.status, contentType, body: idleLimited(res.body, opts.timeoutMs, 'close'), streamed: true, served }
  }
  const body = await readCappedBytes(new Response(idleLimited(res.body, opts.timeoutMs, 'error')), MAX_PLUGIN_ANSWER_BYTES).catch((e: unknown) => {
    throw pluginUnavailable(e instanceof Idle ? `its answer stalled for ${opts.timeoutMs / 1000} s` : 'its answer broke off')
  })
  if (body === null) throw pluginUnavailable(`its answer is over the ${MAX_PLUGIN_ANSWER_BYTES / 1024 / 1024} MB the gateway relays`)
  return { status: res.status, contentType, body, streamed: false, served }
}
