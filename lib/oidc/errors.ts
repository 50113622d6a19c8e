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

/** GETs a JSON document from the provider; any network, status or parse failure is `OidcUnavailableError`. */
export async function fetchProviderJson(url: string, what: string): Promise<unknown> {
  // The whole exchange, the body included, within FETCH_TIMEOUT_MS.
  const bound = deadline(FETCH_TIMEOUT_MS)
  try {
    let res: Response
    try {
      res = await fetch(url, { headers: { accept: 'application/json' }, signal: bound.signal })
    } catch (e) {
      throw new OidcUnavailableError(`${what}: ${url} unreachable`, { cause: e })
    }
    if (!res.ok) {
      await res.body?.cancel()
      throw new OidcUnavailableError(`${what}: ${url} answered ${res.status}`)
    }
    try {
      return await res.json()
    } catch (e) {
      throw new OidcUnavailableError(`${what}: ${url} is not JSON`, { cause: e })
    }
  } finally {
    bound.clear()
  }
}
