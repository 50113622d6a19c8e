import { z } from 'zod'
import { MAX_BATCH } from './watchdog/subrequests'

/** Environment read once per isolate/process: one zod schema, every variable the platform knows. */
const bool = z
  .string()
  .optional()
  .transform((v) => v === '1' || v?.toLowerCase() === 'true' || v?.toLowerCase() === 'yes')

const list = z
  .string()
  .optional()
  .transform((v) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean))

export const configSchema = z.object({
  NODE_ENV: z.string().default('development'),
  APP_VERSION: z.string().optional(),
  APP_ORIGIN: z.string().default('http://localhost:3000').transform((v) =>
    v.split(',').map((s) => s.trim().replace(/\/+$/, '')).filter(Boolean),
  ),
  SERVICE_DOMAIN: z.string().optional(),
  BACKEND_URL: z.string().optional(),
  PUBLIC_URL: z.string().optional(),
  // stores
  DATABASE_URL: z.string().optional(),
  // opening a Postgres connection, and waiting for one statement's answer (node-postgres, the Neon driver)
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(5_000),
  DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(12_000),
  // Workers only: `host:port` of a local Neon-compatible proxy (WebSocket `/v1?address=`, SQL over HTTP `/sql`,
  // plain ws/http) in front of a local Postgres, in place of Neon's own endpoints
  NEON_LOCAL_PROXY: z.string().regex(/^[\w.-]+:\d{1,5}$/, 'host:port').optional(),
  UPSTASH_REDIS_REST_URL: z.string().optional(),
  UPSTASH_REDIS_REST_TOKEN: z.string().optional(),
  QSTASH_URL: z.string().optional(),
  QSTASH_TOKEN: z.string().optional(),
  QSTASH_CURRENT_SIGNING_KEY: z.string().optional(),
  QSTASH_NEXT_SIGNING_KEY: z.string().optional(),
  // each publish or schedule call to QStash gives up after this long, its retries included
  QSTASH_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(5_000),
  S3_BUCKET: z.string().optional(),
  S3_ENDPOINT: z.string().optional(),
  S3_REGION: z.string().default('auto'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool,
  // how long one storage call may wait for its answer (headers), the SDK's retries included
  S3_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(120_000),
  // secrets and switches
  INTERNAL_API_KEY: z.string().optional(),
  HMAC_SECRET: z.string().optional(),
  // local development only: with neither HMAC_SECRET nor INTERNAL_API_KEY, take identity headers unsigned
  ALLOW_UNSIGNED_IDENTITY: bool,
  SESSION_SECRET: z.string().optional(),
  NEXTAUTH_SECRET: z.string().optional(),
  ADMIN_EMAILS: list.transform((l) => l.map((e) => e.toLowerCase())),
  PROVISIONING_ENABLED: bool,
  PROVISIONING_KILL_SWITCH: bool,
  RUNTIME_PROVIDER_TOKEN: z.string().optional(),
  // Railway runtimes (lib/runtime/railway.ts): the token (RUNTIME_PROVIDER_TOKEN), its kind, project and environment
  RAILWAY_TOKEN_KIND: z.enum(['account', 'team', 'project']).default('account'),
  RAILWAY_PROJECT_ID: z.string().optional(),
  RAILWAY_ENVIRONMENT_ID: z.string().optional(),
  RAILWAY_API_URL: z.string().optional(),
  // every Railway GraphQL call, its answer's body included, gives up after this long (502 RUNTIME_UNAVAILABLE)
  RAILWAY_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(15_000),
  // every call to an agent's runtime gateway (sessions, cron, sync, memory reset; not chat or diagnostics) gives up after this long
  RUNTIME_GATEWAY_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(10_000),
  // the watchdog (lib/watchdog, spec "Watchdog lifecycle"): intervals and windows in seconds
  WATCHDOG_CHECK_INTERVAL: z.coerce.number().int().positive().default(120),
  WATCHDOG_DEGRADED_CHECK_INTERVAL: z.coerce.number().int().positive().default(5),
  WATCHDOG_STARTUP_FAILURE_THRESHOLD: z.coerce.number().int().positive().default(3),
  WATCHDOG_MAX_REPAIR_ATTEMPTS: z.coerce.number().int().min(0).default(2),
  WATCHDOG_CRASH_LOOP_WINDOW: z.coerce.number().int().positive().default(300),
  WATCHDOG_CRASH_LOOP_THRESHOLD: z.coerce.number().int().positive().default(3),
  // agents per queue message, probes in flight per message, and messages in flight at once (QStash flow control)
  WATCHDOG_PARALLEL_BATCHES: z.coerce.number().int().min(1).max(100).default(4),
  // at most MAX_BATCH: a batch within a Worker's 1,000 subrequests
  WATCHDOG_BATCH_SIZE: z.coerce.number().int().min(1).max(MAX_BATCH).default(100),
  WATCHDOG_CONCURRENCY: z.coerce.number().int().min(1).max(200).default(25),
  // the chat workload gate (functions/chat/workload.ts): concurrent slots per user and platform-wide, held by tickets that
  // expire after CHAT_TICKET_TTL_SEC; slots spent per calendar minute (a message over 800 characters weighs 2).
  // At least 2 each, so a long message can always be admitted. The namespace prefixes the gate's kv keys.
  CHAT_USER_SLOTS: z.coerce.number().int().min(2).max(10_000).default(4),
  CHAT_GLOBAL_SLOTS: z.coerce.number().int().min(2).max(1_000_000).default(200),
  CHAT_USER_PER_MINUTE: z.coerce.number().int().min(2).max(100_000).default(20),
  CHAT_GLOBAL_PER_MINUTE: z.coerce.number().int().min(2).max(10_000_000).default(2000),
  CHAT_TICKET_TTL_SEC: z.coerce.number().int().min(1).max(86_400).default(300),
  CHAT_GATE_NAMESPACE: z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/).default('chat'),
  // how long a claim (`POST /api/jobs/:id/claim`) leases the job to its claimer before it returns to the queue
  CHAT_JOB_LEASE_SEC: z.coerce.number().int().min(5).max(86_400).default(300),
  // the image every new agent runtime runs
  RUNTIME_IMAGE: z.string().default('ghcr.io/agent-platform/runtime:latest'),
  // secrets at rest (lib/secret-box.ts): `id:base64-32-bytes`, comma-separated, the first seals; else from SESSION_SECRET
  ENCRYPTION_KEYS: z.string().optional(),
  // billing (Stripe): price ids per plan and credit pack, and the one-time expert setup
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  // tests point the SDK at a local fake: `http://127.0.0.1:12111`
  STRIPE_API_URL: z.string().optional(),
  // each Stripe API call gives up after this long (one retry of a failed connection, each attempt bounded by it)
  STRIPE_TIMEOUT_MS: z.coerce.number().int().min(50).max(80_000).default(10_000),
  STRIPE_PRICE_SOLO: z.string().optional(),
  STRIPE_PRICE_COLLECTIVE: z.string().optional(),
  STRIPE_PRICE_LABEL: z.string().optional(),
  STRIPE_PRICE_NETWORK: z.string().optional(),
  STRIPE_PRICE_CREDITS_50: z.string().optional(),
  STRIPE_PRICE_CREDITS_200: z.string().optional(),
  STRIPE_PRICE_CREDITS_500: z.string().optional(),
  STRIPE_PRICE_EXPERT_SETUP: z.string().optional(),
  // Google Calendar (OAuth with GOOGLE_CLIENT_ID/SECRET; endpoints from GOOGLE_DISCOVERY_URL or GOOGLE_ISSUER)
  GOOGLE_CALENDAR_API_URL: z.string().default('https://www.googleapis.com/calendar/v3'),
  // bcrypt work factor for passwords and API keys (tests use 4; see README "Password hashing")
  PASSWORD_HASH_COST: z.coerce.number().int().min(4).max(15).default(10),
  TURNSTILE_SECRET_KEY: z.string().optional(),
  TURNSTILE_VERIFY_URL: z.string().default('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
  // mail: Resend-compatible provider when RESEND_API_KEY is set, else the dev outbox
  RESEND_API_KEY: z.string().optional(),
  RESEND_API_URL: z.string().default('https://api.resend.com'),
  MAIL_FROM: z.string().default('Platform <no-reply@localhost>'),
  // passkeys (WebAuthn): relying party from the first APP_ORIGIN unless set
  WEBAUTHN_RP_ID: z.string().optional(),
  WEBAUTHN_RP_NAME: z.string().default('Platform'),
  WEBAUTHN_ORIGIN: z.string().optional(),
  PASSKEY_CHALLENGE_TTL_MS: z.coerce.number().int().positive().default(5 * 60 * 1000),
  // chains: 8453 (Base) for SIWE, smart wallets and token balances
  BASE_RPC_URL: z.string().default('https://mainnet.base.org'),
  // each RPC attempt gives up after this long (one retry): the answer is then 503 CHAIN_UNAVAILABLE
  BASE_RPC_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(10_000),
  TOKEN_GATE_CONTRACT: z.string().optional(),
  TOKEN_GATE_MIN_BALANCE: z.string().default('1'),
  // Gateway payments (MPP credentials, payment-session deposits): an ERC-20 on chain 8453 (BASE_RPC_URL) paid to
  // PAYMENT_RECIPIENT. Without a recipient, MPP and sessions answer "not configured". USDC on Base by default.
  PAYMENT_RECIPIENT: z.string().optional(),
  PAYMENT_TOKEN_ADDRESS: z.string().default('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
  PAYMENT_TOKEN_DECIMALS: z.coerce.number().int().min(0).max(36).default(6),
  PAYMENT_CURRENCY: z.string().default('USDC'),
  // Managed (agentic) wallets through Coinbase Developer Platform's server-wallet API (v2): configured when the API
  // key (id, and its Ed25519 or EC secret) and the Wallet Secret (base64 PKCS#8 EC key, signs account writes) are
  // set; the project id is optional and only shown. CDP_IMPORT_PUBLIC_KEY (PEM) replaces the RSA key CDP publishes
  // for encrypting imported private keys (functions/wallet/cdp.ts). The secrets never leave the config.
  CDP_API_KEY_ID: z.string().optional(),
  CDP_API_KEY_SECRET: z.string().optional(),
  CDP_WALLET_SECRET: z.string().optional(),
  CDP_PROJECT_ID: z.string().optional(),
  CDP_API_URL: z.string().default('https://api.cdp.coinbase.com'),
  CDP_IMPORT_PUBLIC_KEY: z.string().optional(),
  // every CDP call, its answer's body included, gives up after this long (503 WALLET_PROVIDER_UNAVAILABLE)
  CDP_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(8000),
  // Social post limiter (spec 2 "Limits"): its own Upstash REST database when set, else UPSTASH_REDIS_REST_*
  KV_REST_API_URL: z.string().optional(),
  KV_REST_API_TOKEN: z.string().optional(),
  // The colony's soul host (GET /api/colony/status): the primary, then fallbacks (comma-separated) raced beside it
  SOUL_SERVICE_URL: z.string().optional(),
  SOUL_SERVICE_FALLBACK_URLS: list,
  SOUL_SERVICE_TOKEN: z.string().optional(),
  SOUL_SERVICE_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  // DJ radio (functions/radio): Mux live streams over its REST API (basic auth with the access token id and secret),
  // webhooks signed with MUX_WEBHOOK_SECRET; the station token (ERC-20 on chain 8453) whose holders stream for free.
  MUX_TOKEN_ID: z.string().optional(),
  MUX_TOKEN_SECRET: z.string().optional(),
  MUX_WEBHOOK_SECRET: z.string().optional(),
  // tests point the client at a local fake: `http://127.0.0.1:<port>`
  MUX_API_URL: z.string().default('https://api.mux.com'),
  // every Mux call gives up after this long (the live view then falls back to the session records)
  MUX_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(8000),
  RADIO_STATION_TOKEN: z.string().optional(),
  // The paid plugin gateway (functions/gateway/plugins.ts): JSON merged over the default plugins, e.g.
  // `{"agent":{"url":"https://…","price":"0.02","auth":true}}`; checked by the gateway (and at `npm start`), so a bad
  // value makes the gateway answer 500 MISCONFIGURED with what is wrong, never the other routes fail.
  GATEWAY_PLUGINS: z.string().optional(),
  // How long a plugin's upstream may take to answer (headers), and to send the next chunk of its body.
  GATEWAY_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(1).max(300_000).default(30_000),
  // Google sign-in and cross-account protection (RISC)
  GOOGLE_CLIENT_ID: z.string().optional(),
  GOOGLE_CLIENT_SECRET: z.string().optional(),
  GOOGLE_ISSUER: z.string().default('https://accounts.google.com'),
  GOOGLE_DISCOVERY_URL: z.string().optional(),
  // further client ids (comma-separated) a RISC token's audience may name
  GOOGLE_CLIENT_IDS: list,
  // every call to Google (discovery, the token endpoint, the Calendar API), its answer's body included, gives up after this long
  GOOGLE_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(10_000),
  // Farcaster sign-in: ID tokens from this issuer, for this domain
  FARCASTER_ISSUER: z.string().default('https://auth.farcaster.xyz'),
  FARCASTER_JWKS_URL: z.string().optional(),
  FARCASTER_DOMAIN: z.string().optional(),
  FARCASTER_SESSION_SECRET: z.string().optional(),
  // dashboard health probes: "name=url|fallbackUrl,name2=url"
  HEALTH_PROBE_URLS: z.string().optional(),
  // one `request` log line per request: on unless set otherwise (the test harness sets 0)
  LOG_REQUESTS: bool.default(true),
})

export type Config = z.infer<typeof configSchema> & {
  baseUrl: string
  serviceDomain: string
  sessionSecret?: string
  webauthn: { rpId: string; origin: string }
}

const cache = new WeakMap<object, Config>()

export function parseConfig(env: Record<string, unknown>): Config {
  const hit = cache.get(env)
  if (hit) return hit
  const strings: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) if (typeof v === 'string' && v !== '') strings[k] = v
  const parsed = configSchema.parse(strings)
  const baseUrl = parsed.APP_ORIGIN[0] ?? 'http://localhost:3000'
  const config: Config = {
    ...parsed,
    baseUrl,
    serviceDomain: parsed.SERVICE_DOMAIN ?? new URL(baseUrl).hostname,
    sessionSecret: parsed.SESSION_SECRET ?? parsed.NEXTAUTH_SECRET,
    webauthn: { rpId: parsed.WEBAUTHN_RP_ID ?? new URL(baseUrl).hostname, origin: parsed.WEBAUTHN_ORIGIN ?? baseUrl },
  }
  cache.set(env, config)
  return config
}
