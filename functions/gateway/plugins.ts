import { z } from 'zod'
import type { Config } from '../../lib/config'
import { ApiError } from '../../lib/http/errors'
import { log } from '../../lib/log'

/** The plugins the gateway serves (spec 2 "Gateway"): `agent` and `generate-text` stream, `tts` and `stt` do not. */
export const PLUGIN_IDS = ['agent', 'generate-text', 'tts', 'stt'] as const
export type PluginId = (typeof PLUGIN_IDS)[number]
export const DEFAULT_PLUGIN: PluginId = 'agent'

export interface Plugin {
  id: PluginId
  /** USD per call, a decimal string (`0.01`); `0` is free. */
  price: string
  /** Where calls are proxied; null until configured (the gateway then answers 502 `no_plugin`). */
  url: string | null
  /** Needs a session, an MPP credential or a payment session (the call's payment counts as authentication). */
  auth: boolean
  /** Answers with an event stream when asked (`Accept: text/event-stream`). */
  streaming: boolean
}

/**
 * Defaults: no upstream, no authentication, and prices in proportion to what a call costs to serve (an agent
 * turn, a text generation, a short clip of speech either way). Each is documented in the OpenAPI description.
 */
export const DEFAULT_PLUGINS: Record<PluginId, Omit<Plugin, 'id'>> = {
  agent: { price: '0.01', url: null, auth: false, streaming: true },
  'generate-text': { price: '0.005', url: null, auth: false, streaming: true },
  tts: { price: '0.002', url: null, auth: false, streaming: false },
  stt: { price: '0.002', url: null, auth: false, streaming: false },
}

// Six decimals at most: the payment token's base units (USDC) hold them exactly.
const price = z.string().regex(/^\d{1,6}(\.\d{1,6})?$/, 'price must be a USD decimal string such as "0.01"')
const override = z
  .object({
    price: price.optional(),
    url: z.url({ protocol: /^https?$/, error: 'url must be an http(s) URL' }).optional(),
    auth: z.boolean({ error: 'auth must be true or false' }).optional(),
  })
  .strict()
const overrides = z.object(Object.fromEntries(PLUGIN_IDS.map((id) => [id, override.optional()])) as Record<PluginId, z.ZodOptional<typeof override>>).strict()

/** Why `GATEWAY_PLUGINS` cannot be used; the message names the variable and the first problem. */
export class GatewayConfigError extends Error {
  constructor(problem: string) {
    super(`GATEWAY_PLUGINS is invalid: ${problem}`)
    this.name = 'GatewayConfigError'
  }
}

function parsePlugins(raw: string | undefined): Record<PluginId, Plugin> {
  let json: unknown = {}
  if (raw !== undefined) {
    try {
      json = JSON.parse(raw)
    } catch {
      throw new GatewayConfigError('not JSON')
    }
  }
  const parsed = overrides.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new GatewayConfigError(`${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  return Object.fromEntries(PLUGIN_IDS.map((id) => [id, { id, ...DEFAULT_PLUGINS[id], ...parsed.data[id] }])) as Record<PluginId, Plugin>
}

// Per parsed configuration (itself cached per env): parsed once per isolate, not per request.
const registries = new WeakMap<Config, Record<PluginId, Plugin> | GatewayConfigError>()

/** The registry from `GATEWAY_PLUGINS` over the defaults; throws `GatewayConfigError` for a bad value. */
export function gatewayPlugins(config: Config): Record<PluginId, Plugin> {
  let hit = registries.get(config)
  if (!hit) {
    try {
      hit = parsePlugins(config.GATEWAY_PLUGINS)
    } catch (e) {
      if (!(e instanceof GatewayConfigError)) throw e
      hit = e
    }
    registries.set(config, hit)
  }
  if (hit instanceof GatewayConfigError) throw hit
  return hit
}

/** The registry for a request: a bad `GATEWAY_PLUGINS` is 500 `internal` (`GATEWAY_INTERNAL`) saying what is wrong (and logged). */
export function pluginsFor(config: Config): Record<PluginId, Plugin> {
  try {
    return gatewayPlugins(config)
  } catch (e) {
    if (!(e instanceof GatewayConfigError)) throw e
    log.error('gateway.misconfigured', { problem: e.message })
    throw new ApiError('GATEWAY_INTERNAL', e.message)
  }
}

export const isPluginId = (id: string): id is PluginId => (PLUGIN_IDS as readonly string[]).includes(id)
