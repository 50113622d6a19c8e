import type { LimitRule } from '../kv/types'

export interface NamedLimit extends LimitRule {
  message: string
  /** What a request is counted against: the client address unless `user` (the signed-in caller). */
  per?: 'user'
}

/**
 * Every rate limit of every family, in one table (the spec's "Limits" where it has them; messages exact
 * where the spec gives one). Routes apply and document them with `limitedRoute` (lib/http/rate-limit.ts).
 */
export const limits = {
  // Every backend `/api` route, per IP.
  backend: { name: 'backend', limit: 120, windowSec: 60, message: 'Too many requests, please slow down.' },
  login: { name: 'login', limit: 5, windowSec: 15 * 60, message: 'Too many login attempts. Try again later.' },
  register: { name: 'register', limit: 10, windowSec: 60 * 60, message: 'Too many requests' },
  // Forgot and reset per IP; change-password shares the name but counts per user (a stolen session guessing).
  passwordReset: { name: 'password-reset', limit: 5, windowSec: 15 * 60, message: 'Too many requests' },
  passwordChange: { name: 'password-reset', limit: 5, windowSec: 15 * 60, message: 'Too many requests', per: 'user' },
  // Per user: each resend is a mail sent to an address that may not be the user's.
  verifyEmailResend: { name: 'verify-email-resend', limit: 3, windowSec: 60 * 60, message: 'Too many verification emails. Try again later.', per: 'user' },
  // Per IP: tokens are 256-bit, this only keeps the endpoint from being a free database load.
  verifyEmail: { name: 'verify-email', limit: 20, windowSec: 15 * 60, message: 'Too many requests' },
  // Per user: each create is a bcrypt hash (~120 ms of CPU at cost 10); the 10-key cap is refused before it.
  apiKeyCreate: { name: 'api-key-create', limit: 10, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Per IP: validation is a lookup and a bcrypt compare, and the endpoint needs no session.
  apiKeyValidate: { name: 'keys-validate', limit: 60, windowSec: 60, message: 'Too many requests' },
  // Per IP, options and verify together (a passkey sign-in is two requests).
  passkeySignIn: { name: 'passkey-auth', limit: 20, windowSec: 60, message: 'Too many requests' },
  // Per IP. A nonce costs one kv write; a sign-in may cost an RPC call and a user row.
  walletNonce: { name: 'wallet-nonce', limit: 30, windowSec: 60, message: 'Too many requests' },
  walletSignIn: { name: 'wallet-auth', limit: 10, windowSec: 60, message: 'Too many sign-in attempts. Try again later.' },
  // Per IP: a public route that creates a Stripe Checkout Session on every call.
  expertSetupCheckout: { name: 'expert-setup-checkout', limit: 10, windowSec: 60, message: 'Too many requests' },
  // Per user: checkout actions create Stripe sessions; BYOK seals a key. Generous for a person, tight for a script.
  billingAction: { name: 'billing-action', limit: 20, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Web `/api/instance/*` and `/api/runtime/maintenance`, per IP (spec "Limits": 30/min), and as much per user in
  // addition: each may probe or act on a runtime, and a user spread over many addresses still acts on the same one.
  instance: { name: 'instance', limit: 30, windowSec: 60, message: 'Too many requests' },
  instancePerUser: { name: 'instance-user', limit: 30, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Backend `/api/ai/*`, per IP (spec "Limits").
  ai: { name: 'ai', limit: 30, windowSec: 60, message: 'AI rate limit exceeded.' },
  // Web `/api/agents*` per IP (spec "Limits": 100/min), every agent route together; as much per user in addition
  // (the lifecycle routes start and stop the user's runtimes whatever address asks).
  agents: { name: 'agents', limit: 100, windowSec: 60, message: 'Too many requests' },
  agentsPerUser: { name: 'agents-user', limit: 100, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Web `POST /api/provision` per IP (spec "Limits": 5/min), and as much per user in addition: each one may create a runtime.
  provision: { name: 'provision', limit: 5, windowSec: 60, message: 'Too many requests' },
  provisionPerUser: { name: 'provision-user', limit: 5, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Backend `POST /api/deployments` per IP (spec "Limits", message exact).
  deployments: { name: 'deployments', limit: 5, windowSec: 60, message: 'Deployment rate limit exceeded.' },
  // Web `POST /api/v1/gateway` per IP (spec "Limits": 100/min): anonymous, paid calls.
  gateway: { name: 'gateway', limit: 100, windowSec: 60, message: 'Too many requests' },
  // Web chat per IP (spec "Limits": `/api/chat` 60/min): `POST /api/gateway/chat`, before the workload gate.
  chat: { name: 'chat', limit: 60, windowSec: 60, message: 'Too many requests' },
  // Per IP: opening a payment session verifies its deposit on chain (RPC calls); reading one is a database read.
  paymentSessionOpen: { name: 'payment-session-open', limit: 10, windowSec: 60, message: 'Too many requests' },
  paymentSessionRead: { name: 'payment-session-read', limit: 60, windowSec: 60, message: 'Too many requests' },
  // Web `/api/permissions*` per user: the list, decisions and socket connections together (each one a query).
  permissions: { name: 'permissions', limit: 120, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Radio, per IP. The live view is public and polled by players (served from a 10 s cache); a create reads the chain
  // and makes a Mux live stream; an end calls Mux.
  radioLive: { name: 'radio-live', limit: 120, windowSec: 60, message: 'Too many requests' },
  radioCreate: { name: 'radio-create', limit: 10, windowSec: 60, message: 'Too many requests' },
  radioEnd: { name: 'radio-end', limit: 30, windowSec: 60, message: 'Too many requests' },
  // Skills. Per user: each create puts a skill in the public catalog (spam), 10 per 10 minutes is plenty by hand.
  skillCreate: { name: 'skill-create', limit: 10, windowSec: 600, message: 'Too many skills created. Try again later.', per: 'user' },
  // Per user: a rating is a locked write of the skill's counters.
  skillRating: { name: 'skill-rating', limit: 30, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Per user, install and uninstall together: each one syncs the agent's runtime.
  skillInstall: { name: 'skill-install', limit: 30, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Per user: each download adds to the skill's public download count.
  skillDownload: { name: 'skill-download', limit: 60, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Per IP: the scan needs no session and parses the code it is sent.
  skillVerify: { name: 'skill-verify', limit: 30, windowSec: 60, message: 'Too many requests' },
  // Wallet, per IP: the balance query is public and costs one batched RPC request; the signed-in wallet routes
  // (a database read each) count here too.
  wallet: { name: 'wallet', limit: 60, windowSec: 60, message: 'Too many requests' },
  // Per user: each top-up creates a Stripe Checkout Session.
  walletTopUp: { name: 'wallet-top-up', limit: 10, windowSec: 60, message: 'Too many requests', per: 'user' },
  // Live log streams, per user: opening one starts (or joins) a tail of the runtime's logs; at most 5 stay open
  // at once (lib/logs/streams.ts), and this keeps a client from churning through them.
  logStreamOpen: { name: 'log-stream-open', limit: 20, windowSec: 60, message: 'Too many requests', per: 'user' },
} satisfies Record<string, NamedLimit>
