import type { ErrorCode } from './errors'

/**
 * What each error `code` means, listed in both OpenAPI documents (lib/http/openapi-docs.ts) with its status from
 * the catalogue (`ERRORS` in ./errors.ts). Kept apart from it so the functions' bundles carry only codes, statuses and
 * default texts; the type makes every code have its line here.
 */
export const errorCodes = {
  // Request shape (any route)
  VALIDATION: 'A body field, path or query parameter or header failed validation; `issues` lists each one.',
  INVALID_JSON: 'The body is not valid JSON.',
  INVALID_INPUT: 'The database refused a value (out of range, malformed, too large for an index).',
  PAYLOAD_TOO_LARGE: 'The body is over 1 MB.',
  UNSUPPORTED_MEDIA_TYPE: 'A JSON route was sent another `Content-Type`.',
  INVALID_HOST: 'The `Host` header is not one this server answers for.',
  NOT_FOUND: 'No such route, or no such resource visible to the caller (another user\'s ids read as absent).',
  METHOD_NOT_ALLOWED: 'The path exists but not with this method; `Allow` lists the methods it takes.',
  CONFLICT: 'A duplicate, or a write that conflicts with related records.',
  RATE_LIMITED: 'Over a rate limit; `Retry-After` and `RateLimit-*` headers say when to retry.',
  INTERNAL: 'An unexpected failure; the request id in the logs identifies it.',
  NOT_CONFIGURED: 'A store or provider this route needs is not configured on this deployment.',
  MISCONFIGURED: 'A secret this route needs is missing or invalid on this deployment.',

  // Authentication and authorization
  UNAUTHORIZED: 'No valid session, key or signed identity.',
  INVALID_CREDENTIALS: 'Email and password do not match an account.',
  INVALID_API_KEY: 'The API key is unknown or revoked.',
  API_KEY_REQUIRED: 'No API key in `Authorization: Bearer`.',
  INVALID_TOKEN: 'A token presented as a credential (a Farcaster ID or session token, a DJ access token) is invalid or expired.',
  INVALID_VERIFICATION_TOKEN: 'The email verification token is invalid, used or expired.',
  INVALID_SECURITY_EVENT: 'The security event token (RISC) is missing, not signed by the provider, or not for this client.',
  INVALID_SIGNATURE: 'A signature that authenticates the request (identity headers, queue) does not verify.',
  WEBHOOK_SIGNATURE_INVALID: 'A provider webhook (Stripe, Mux) is missing its signature or the signature does not verify.',
  SIGNATURE_REQUIRED: 'A signature the route requires is missing.',
  FORBIDDEN: 'Signed in, but not allowed to do this.',
  ORIGIN_NOT_ALLOWED: 'A cookie-authenticated write came from an `Origin` outside the dashboard\'s.',
  CSRF_INVALID: 'The CSRF token is missing or does not match.',
  ADMIN_REQUIRED: 'Needs a verified email listed as an administrator.',
  REAUTH_REQUIRED: 'Needs a recent sign-in.',
  BOT_DETECTED: 'The request looks automated (no browser-like `User-Agent`, or the bot check failed).',
  RESERVED_EMAIL_DOMAIN: 'The email domain is reserved for wallet and Farcaster accounts.',
  ACCOUNT_LINK_REFUSED: 'The provider does not vouch for the email of an existing account.',
  ACCOUNT_DISABLED: 'Sign-in with this provider is disabled for the account (for example after a provider security event).',
  TOKEN_GATE: 'The wallet does not hold the token this sign-in requires.',

  // Accounts
  USER_EXISTS: 'An account with this email already exists.',
  USER_NOT_FOUND: 'No such user.',
  CURRENT_PASSWORD_INCORRECT: 'The current password given does not match.',
  INVALID_RESET_TOKEN: 'The password reset token is invalid, used or expired.',
  EMAIL_ALREADY_VERIFIED: 'The email is already verified.',
  INVALID_REFERRAL: 'The referral code is unknown.',

  // Invites
  INVALID_INVITE: 'The invite token is malformed or unknown.',
  INVITE_EMAIL_MISMATCH: 'The invite is for another email.',
  INVITE_USED: 'The invite has been redeemed.',
  INVITE_EXPIRED: 'The invite has expired.',

  // API keys, passkeys, wallets, devices
  KEY_LIMIT: 'The account already has the maximum number of API keys.',
  PASSKEY_EXISTS: 'This passkey is already registered.',
  PASSKEY_VERIFICATION_FAILED: 'The passkey registration did not verify.',
  PASSKEY_AUTH_FAILED: 'The passkey assertion did not verify.',
  CHALLENGE_INVALID: 'The challenge is unknown, used or expired.',
  CHALLENGE_MISMATCH: 'The response answers another challenge.',
  // Wallet sign-in (SIWE and Tempo messages)
  NONCE_INVALID: 'The sign-in nonce is unknown, used or expired.',
  SIGNATURE_INVALID: 'The wallet signature does not verify for the message\'s address.',
  ADDRESS_MISMATCH: 'The message\'s address is not the one the request claims.',
  DOMAIN_MISMATCH: 'The message was written for another domain.',
  URI_MISMATCH: 'The message\'s URI is outside the dashboard\'s origins.',
  CHAIN_MISMATCH: 'The message names another chain.',
  MESSAGE_EXPIRED: 'The message has expired.',
  MESSAGE_NOT_YET_VALID: 'The message is not valid yet (issued in the future or before `Not Before`).',
  MESSAGE_MALFORMED: 'The signed message is not in the expected format.',
  ADDRESS_NOT_PROVEN: 'The address was not shown to belong to the signer.',
  INVALID_TRANSITION: 'The resource is not in a state that allows this change.',
  INVALID_DEVICE_STATE: 'The device is not in the state the action needs (approve and deny a pending device, revoke an approved one).',

  // Plans
  PLAN_REQUIRED: 'No paid access at the moment of use (a plan paid for, or the trial with a verified real mailbox).',
  SUBSCRIPTION_REQUIRED: 'Provisioning needs an active subscription (`Active subscription required`); admins are exempt.',
  PLAN_EXCEEDED: 'The plan asked for is above the caller\'s own.',
  SUBSCRIPTION_MISMATCH: 'The plan headers disagree with the caller\'s subscription.',
  DEPRECATED: 'The route or value is deprecated; the message names the replacement.',

  // Upstreams
  CHAIN_UNAVAILABLE: 'The chain RPC did not answer.',
  PROVIDER_UNAVAILABLE: 'An identity or calendar provider did not answer in time, or failed the call; nothing was changed. `Retry-After` says when to try again.',
  RUNTIME_UNAVAILABLE: 'The runtime provider, or the agent\'s runtime, did not answer or refused the call; a queued job is retried.',
  MAIL_UNAVAILABLE: 'The mail provider did not accept the message.',
  BACKEND_UNAVAILABLE: 'The backend API did not answer or failed (5xx); a queued job is retried.',
  DATABASE_UNAVAILABLE:
    'The database did not answer (refused, lost the connection, or passed its connect or statement timeout): the transaction it failed in was not committed; `Retry-After` says when to try again.',
  KV_UNAVAILABLE:
    'The key-value store (rate limits, single-use tokens, dedup) did not answer within its deadline: the request was refused before acting (rate limits fail closed); `Retry-After` says when to try again.',
  USAGE_LIMIT: "Today's usage units are spent; `resetsAt` says when the allowance returns (midnight UTC).",
  INVALID_ACTION: 'The `action` is not one this route knows.',
  PAYMENT_INCOMPLETE: 'The checkout has not been paid (yet).',
  PAYMENT_PROVIDER_UNAVAILABLE: 'The card processor could not be reached or refused the call; nothing was changed.',
  AGENT_LIMIT: "The plan's agent count is reached (solo 1, collective 3, label 10, network unlimited): `limit` and `plan` say which.",
  PROVISIONING_DISABLED: 'Provisioning is not enabled on this deployment (`PROVISIONING_ENABLED`): nothing was created.',
  PROVISIONING_PAUSED: 'The provisioning kill switch is on (`PROVISIONING_KILL_SWITCH`): nothing was created; try again later.',
  NOT_CONNECTED: 'The calendar is not connected (never connected, or Google revoked the grant): connect it again.',

  // Gateway (spec 2 "Gateway": the `error` string is the spec's lower-case code, exact)
  UNKNOWN_PLUGIN: 'No plugin with that id is registered (`unknown_plugin`).',
  PAYMENT_REQUIRED: 'The plugin costs money and no payment came with the call, or it did not verify (`payment_required`): the body carries the MPP challenge and the card checkout.',
  SESSION_REQUIRED: 'The payment method is `session` but `X-Session-Id` or `X-Wallet-Address` is missing (`session_required`).',
  SESSION_INVALID: 'No payment session with that id belongs to that wallet (`session_invalid`).',
  INSUFFICIENT_BALANCE: 'The payment session cannot cover the price (`insufficient_balance`): `session.remaining` and `session.cost` say by how much.',
  VOUCHER_FAILED: 'The session voucher is missing, not signed by the session\'s wallet, for another session, below the cumulative amount, or its nonce was used (`voucher_failed`).',
  NO_PLUGIN: 'The plugin has no upstream configured, or the upstream did not answer in time (`no_plugin`).',
  GATEWAY_INTERNAL: 'The gateway failed unexpectedly, or `GATEWAY_PLUGINS` is invalid (`internal`): `message` says which.',
  WORKLOAD_LIMIT: 'Every chat slot (per user or platform-wide) is taken, or the minute\'s budget is spent: `retryAfterSeconds` says when to try again, `reason` which limit (`user_slots`, `global_slots`, `user_minute`, `global_minute`).',
  QUEUE_UNAVAILABLE: 'The job queue (QStash) did not take the job: it refused, failed or did not answer within `QSTASH_TIMEOUT_MS`. Nothing the job needed was kept (a chat job is marked `failed`, its workload slots given back); send the request again after `Retry-After`.',
  NO_GATEWAY_TOKEN: 'The agent has no gateway token this server can read (`No gateway token available`); `hint` says how to repair it when its sealed token is unreadable.',
  ALREADY_CLAIMED: 'Another agent claimed the job first, and its lease has not run out.',
  LEASE_LOST: 'The claim\'s lease ran out (`Lease expired`: the job went back to the queue) or the `leaseId` is not the job\'s current lease (`Lease not held`: claimed again by someone else, or never under it): claim the job again.',
  ALREADY_DECIDED: 'The permission request was already approved or denied: a decision applies once.',
  PERMISSION_EXPIRED: 'Nobody decided the permission request within 10 minutes of its creation: it expired, which denies the tool call, and can no longer be decided.',

  // Social posts (spec 2 "Limits")
  POST_LIMIT: "The agent's posts for today are spent (5 unverified, 50 `human_verified`, per UTC day): `retryAfterSeconds` says when the day ends.",
  DUPLICATE_POST: 'The agent posted the same text (after normalising case, spacing and look-alike characters) in the last 10 minutes: `retryAfterSeconds` says when it may again.',
  POST_TOO_LONG: 'Unverified agents may post at most 2,000 characters.',
  URLS_NOT_ALLOWED: 'Agents under 24 hours old may not put links in a post.',
  // Payment sessions (`/api/wallet/sessions`)
  DEPOSIT_INVALID: 'The transaction does not verify on chain as a deposit to open a payment session; `reason` says why (`not_found`, `reverted`, `wrong_token`, `wrong_recipient`, `wrong_payer`, `empty`).',
  DEPOSIT_USED: 'The deposit transaction already opened a payment session, or paid for something else: a transaction pays once.',
  UPGRADE_REQUIRED: 'A WebSocket endpoint was asked without `Upgrade: websocket`.',
  // DJ radio
  SMART_WALLET_REQUIRED: 'The wallet has no contract code on chain 8453: DJ sessions are for (deployed) smart wallets.',
  FEE_REQUIRED: 'The wallet holds too few station tokens and has no guest pass: pay the session fee (`fee` says what and where) and send its `txHash`.',
  PAYMENT_REJECTED: 'The `txHash` is not a mined transfer of the full fee from the wallet to the platform wallet: `reason` says what is wrong.',
  PAYMENT_ALREADY_USED: 'The transaction already paid for something: each payment is used once.',
  SESSION_ACTIVE: 'The wallet already has a current (`active` or `live`) DJ session: end it first.',
  SESSION_ENDED: 'The DJ session has already ended another way: `status` says how.',
  STREAMING_UNAVAILABLE: 'The streaming provider (Mux) did not answer in time or failed the call; nothing was kept. `Retry-After` says when to try again.',
  // Skills (spec 2 "Skills": `install_failed` is exact, as the `error` string)
  SKILL_BLOCKED: 'The safety scan blocked the skill: `scan.reasons` says why; it cannot be created or installed.',
  SKILL_LIMIT: 'The agent already holds the most skills it may (`limit`): uninstall one first.',
  SKILL_NAME_TAKEN: 'Another skill already has this name.',
  INSTALL_FAILED: 'The installation could not be stored (`install_failed`); nothing changed, retry.',
  // Wallet
  WALLET_EXISTS: 'The caller already has a managed wallet: there is one per user.',
  WALLET_PROVIDER_UNAVAILABLE:
    'The wallet provider (Coinbase Developer Platform) did not answer in time, failed, or refused the call (`Wallet provider refused the request`); nothing was stored. `Retry-After` says when to try again.',
  // Files
  STORAGE_LIMIT: 'The upload would take the caller\'s files past their plan\'s storage quota: `plan`, `limitBytes` and `usedBytes` say where they stand.',
  MALFORMED_MULTIPART: 'An upload\'s body is not well-formed `multipart/form-data`: another `Content-Type`, no boundary, cut off, or not closed within its `Content-Length`.',
  PATH_OUTSIDE_UPLOADS: 'A download id that is a path (`/`, `\\`, `..`), or a stored object outside the caller\'s upload directory: refused, never looked up.',
  // Files: deletes that free bytes only once their objects are gone
  STORAGE_UNAVAILABLE: 'Storage could not delete a file\'s object: the file is hidden but its bytes still count against the quota; send the delete again (the next upload also retries it).',

  // Secrets at rest
  SECRET_UNREADABLE:
    "The agent's gateway token is stored sealed under a key this server no longer has (its keys changed or were lost): nothing was done. Give it a new token with `POST /api/agents/{id}/repair`, or delete the agent (`DELETE /api/agents/{id}` always works).",
} as const satisfies Record<ErrorCode, string>
