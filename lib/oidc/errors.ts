import { deadline } from '../deadline'

/**
 * The identity provider could not be reached or answered nonsense (discovery, JWKS, token endpoint):
 * a transient condition, kept apart from "this token is invalid" so callers can answer 503 rather than 400.
 */
export class OidcUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'OidcUnavailableError'
  }
}

const FETCH_TIMEOUT_MS = 10_000

/**
 * GETs a JSON document from the provider; any network, status or parse failure is `OidcUnavailableError`, whose
 * message names what was fetched, never its URL (logs carry no host).
 */
export async function fetchProviderJson(url: string, what: string, timeoutMs = FETCH_TIMEOUT_MS): Promise<unknown> {
  // The whole exchange, the body included, within the timeout (GOOGLE_TIMEOUT_MS for Google).
  const bound = deadline(timeoutMs)
  try {
    let res: Response
    try {
      res = await fetch(url, { headers: { accept: 'application/json' }, signal: bound.signal })
    } catch (e) {
      throw new OidcUnavailableError(bound.timedOut ? `${what}: no answer within ${timeoutMs} ms` : `${what}: unreachable`, { cause: e })
    }
    if (!res.ok) {
      await res.body?.cancel()
      throw new OidcUnavailableError(`${what}: answered ${res.status}`)
    }
    try {
      return await res.json()
    } catch (e) {
      throw new OidcUnavailableError(bound.timedOut ? `${what}: no answer within ${timeoutMs} ms` : `${what}: not JSON`, { cause: e })
    }
  } finally {
    bound.clear()
  }
}
