import { createServer } from 'node:http'
import { OAuth2Issuer, OAuth2Service, type MutableToken, type TokenRequest } from 'oauth2-mock-server'
import { listen } from './loopback'

export interface IdentityClaims {
  sub?: string
  email?: string
  email_verified?: boolean
  name?: string
  [claim: string]: unknown
}

/**
 * A real OpenID Connect provider on loopback: oauth2-mock-server's service (discovery, JWKS, authorize with
 * PKCE and nonce, token) behind our own `http.Server`, so every request is counted by path (the library's
 * `OAuth2Server` hides its server). The issuer is `http://127.0.0.1:<port>/<run id>`: never `localhost`
 * (it may resolve to ::1 where nothing listens), and unique per run, because discovery and JWKS are cached
 * in kv under their URL for 24 h and real Redis outlives a run (a reused port must not find old keys).
 */
export async function startOidcServer() {
  const issuer = new OAuth2Issuer()
  const service = new OAuth2Service(issuer)
  const firstKey = await issuer.keys.generate('RS256')

  const requests: Array<{ method: string; path: string }> = []
  const tokenRequests: TokenRequest[] = []
  const prefix = `/${crypto.randomUUID().slice(0, 8)}`
  const server = createServer((req, res) => {
    // The service routes at the root: strip the issuer's path.
    if (req.url?.startsWith(`${prefix}/`)) req.url = req.url.slice(prefix.length)
    requests.push({ method: req.method ?? '', path: new URL(req.url ?? '/', 'http://x').pathname })
    service.requestHandler(req, res)
  })
  const loopback = await listen(server)
  const url = `${loopback.url}${prefix}`
  issuer.url = url

  // Claims for the ID tokens the token endpoint issues next (also applied to its access tokens: harmless).
  let identity: IdentityClaims = {}
  let overrides: Record<string, unknown> = {}
  service.on('beforeTokenSigning', (token: MutableToken) => {
    Object.assign(token.payload, identity, overrides)
  })
  // A token endpoint failure for one grant type (an `invalid_grant` on refresh, a 500), until cleared.
  let tokenFailure: { grantType: string; status: number; body: unknown } | null = null
  // Edits every token response body before it is sent (a provider's `scope` as granted), until cleared.
  let tokenEdit: ((body: Record<string, unknown>, request: TokenRequest) => void) | null = null
  service.on('beforeResponse', (res: { body: unknown; statusCode: number }, req: { body: TokenRequest }) => {
    tokenRequests.push(req.body)
    tokenEdit?.(res.body as Record<string, unknown>, req.body)
    if (tokenFailure && req.body.grant_type === tokenFailure.grantType) {
      res.statusCode = tokenFailure.status
      res.body = tokenFailure.body
    }
  })

  return {
    url,
    issuer,
    firstKid: firstKey.kid,
    discoveryUrl: `${url}/.well-known/openid-configuration`,
    requests,
    tokenRequests,
    count: (path: string) => requests.filter((r) => r.path === path).length,
    /** The user the next token responses describe. */
    setIdentity(claims: IdentityClaims) {
      identity = claims
    },
    /** Claims forced into the next tokens after everything else (a wrong `aud` or `nonce`); `{}` clears. */
    override(claims: Record<string, unknown>) {
      overrides = claims
    },
    /** The token endpoint answers `status` with `body` to `grantType` requests; `null` clears. */
    failTokens(failure: { grantType: string; status: number; body: unknown } | null) {
      tokenFailure = failure
    },
    /** `edit` changes each token response body (e.g. the granted `scope`); `null` clears. */
    editTokens(edit: ((body: Record<string, unknown>, request: TokenRequest) => void) | null) {
      tokenEdit = edit
    },
    /** Publishes a new signing key (rotation); tokens built without a kid then alternate keys. */
    rotate: () => issuer.keys.generate('RS256'),
    /** A token signed by the provider's key `kid`: `claims` merged over iss/iat/exp/nbf (undefined deletes one). */
    sign(claims: Record<string, unknown>, opts: { kid?: string } = {}) {
      return issuer.buildToken({
        kid: opts.kid ?? firstKey.kid,
        scopesOrTransform: (_header, payload) => {
          for (const [k, v] of Object.entries(claims)) {
            if (v === undefined) Reflect.deleteProperty(payload, k)
            else payload[k] = v
          }
        },
      })
    },
    close: loopback.close,
  }
}

export type OidcServer = Awaited<ReturnType<typeof startOidcServer>>
