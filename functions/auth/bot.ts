import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../../lib/context'
import { deadline } from '../../lib/deadline'
import { ApiError } from '../../lib/http/errors'

// Scripted HTTP clients and crawlers: a browser sign-up never sends these.
const SCRIPTED_AGENT =
  /^(curl|wget|python-requests|python-urllib|python-httpx|aiohttp|go-http-client|java|okhttp|axios|node-fetch|undici|got|httpie|libwww-perl|lwp|php|ruby|scrapy|postmanruntime|insomnia|powershell|http\.rb)\b|bot\b|crawler|spider|headlesschrome/i

const SCRIPTED_HINT =
  'Sign-up expects a browser: send a browser’s User-Agent header (e.g. `User-Agent: Mozilla/5.0 …`); scripted clients (curl, wget, python-requests, …) are refused by name'

export const isScriptedUserAgent = (ua: string | undefined) => !ua?.trim() || SCRIPTED_AGENT.test(ua.trim())

/** Bot detection, first part: an empty or scripted user agent is refused before the body is read. */
export const rejectScriptedAgents = createMiddleware<AppEnv>(async (c, next) => {
  if (isScriptedUserAgent(c.req.header('user-agent'))) throw new ApiError('BOT_DETECTED', { extra: { hint: SCRIPTED_HINT } })
  await next()
})

/**
 * Bot detection, second part: when `TURNSTILE_SECRET_KEY` is set, a Turnstile token (`cf-turnstile-response`
 * body field or header) must verify with Cloudflare's siteverify (`TURNSTILE_VERIFY_URL`).
 */
export async function verifyTurnstile(c: Context<AppEnv>, bodyToken: string | undefined) {
  const { config, clientIp } = c.var.services
  if (!config.TURNSTILE_SECRET_KEY) return
  const token = bodyToken ?? c.req.header('cf-turnstile-response')
  if (!token) throw new ApiError('BOT_DETECTED', { message: 'Bot verification required', extra: { hint: 'Send the Turnstile widget’s token as `cf-turnstile-response` (body field or header)' } })
  const form = new URLSearchParams({ secret: config.TURNSTILE_SECRET_KEY, response: token, remoteip: clientIp(c) })
  const bound = deadline(5000)
  let outcome: { success?: boolean } | null
  try {
    const res = await fetch(config.TURNSTILE_VERIFY_URL, { method: 'POST', body: form, signal: bound.signal }).catch(() => null)
    outcome = res?.ok ? ((await res.json().catch(() => null)) as { success?: boolean } | null) : null
  } finally {
    bound.clear()
  }
  if (!outcome?.success) throw new ApiError('BOT_DETECTED', 'Bot verification failed')
}
