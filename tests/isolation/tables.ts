import type { Harness } from '../support/harness'
import {
  accounts,
  agentEvents,
  agents,
  agentWatchdog,
  apiKeys,
  devices,
  emailVerifications,
  installations,
  invites,
  mailOutbox,
  passkeys,
  calendarConnections,
  chainPayments,
  files,
  muxEvents,
  radioGuestPasses,
  radioSessions,
  skillInstallations,
  skillRatings,
  skills,
  socialPosts,
  storageUsage,
  userWallets,
  chatJobs,
  paymentSessions,
  paymentSessionVouchers,
  permissionRequests,
  creditPurchases,
  walletTopUps,
  passwordResets,
  providerKeys,
  referrals,
  securityEvents,
  stripeEvents,
  subscriptionDeployments,
  subscriptionDeployOutbox,
  queueMessages,
  queueSchedules,
} from '../../schema'

type Seeded = { alice: { id: string; email: string }; carol: { id: string } }

/**
 * Every table in the database, with the column that names its owner, what app_user may do to it (the grants
 * of drizzle/0006_rls_binds.sql, stated again here so a widened grant fails a test) and a row of alice's.
 * A test checks this list against the catalog: a new table must be added here, and so be attacked.
 */
export interface TableCase {
  name: string
  owner: string
  /** A column for the cross-user UPDATE: one app_user may update when there is one. */
  update: string
  grants: { select: boolean; delete: boolean; update: boolean }
  /** Every user may read every row (a public catalog): reads are not isolated, writes are. */
  publicRead?: boolean
  seed?: (h: Harness, s: Seeded) => Promise<unknown>
}

const future = () => new Date(Date.now() + 3_600_000)
const hex = () => crypto.randomUUID().replace(/-/g, '')

export const TABLES: TableCase[] = [
  { name: 'users', owner: 'id', update: 'name', grants: { select: true, delete: false, update: true } },
  { name: 'sessions', owner: 'user_id', update: 'expires_at', grants: { select: true, delete: true, update: false } },
  {
    name: 'referrals',
    owner: 'referrer_id',
    update: 'credits',
    grants: { select: true, delete: false, update: false },
    seed: (h, s) => h.db.insert(referrals).values({ referredId: s.carol.id, referrerId: s.alice.id, credits: 10 }),
  },
  {
    name: 'api_keys',
    owner: 'user_id',
    update: 'name',
    grants: { select: true, delete: true, update: false },
    seed: (h, s) => h.db.insert(apiKeys).values({ userId: s.alice.id, name: 'k', prefix: 'sk_0000000', keyHash: 'x', keySha256: hex() }),
  },
  {
    name: 'password_resets',
    owner: 'user_id',
    update: 'used_at',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(passwordResets).values({ tokenHash: hex(), userId: s.alice.id, expiresAt: future() }),
  },
  {
    name: 'email_verifications',
    owner: 'user_id',
    update: 'used_at',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(emailVerifications).values({ tokenHash: hex(), userId: s.alice.id, email: s.alice.email, expiresAt: future() }),
  },
  {
    name: 'mail_outbox',
    owner: 'to',
    update: 'subject',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(mailOutbox).values({ to: s.alice.id, subject: 'Reset', text: 'token', kind: 'password-reset' }),
  },
  {
    name: 'invites',
    owner: 'created_by',
    update: 'audience',
    grants: { select: true, delete: false, update: false },
    seed: (h, s) => h.db.insert(invites).values({ code: hex() + hex(), name: 'Friend', audience: 'guest', createdBy: s.alice.id }),
  },
  {
    name: 'devices',
    owner: 'user_id',
    update: 'status',
    grants: { select: true, delete: false, update: true },
    seed: (h, s) => h.db.insert(devices).values({ userId: s.alice.id, name: 'laptop', status: 'pending', pairingCode: 'ABC123' }),
  },
  {
    name: 'installations',
    owner: 'user_id',
    update: 'status',
    grants: { select: true, delete: false, update: true },
    seed: (h, s) => h.db.insert(installations).values({ userId: s.alice.id, mode: 'home', gatewayToken: 'gw' }),
  },
  {
    name: 'passkeys',
    owner: 'user_id',
    update: 'counter',
    grants: { select: true, delete: true, update: false },
    seed: (h, s) => h.db.insert(passkeys).values({ id: hex(), userId: s.alice.id, publicKey: 'pk' }),
  },
  {
    name: 'accounts',
    owner: 'user_id',
    update: 'sign_in_disabled',
    grants: { select: true, delete: false, update: false },
    seed: (h, s) => h.db.insert(accounts).values({ userId: s.alice.id, provider: 'google', providerAccountId: hex() }),
  },
  {
    name: 'security_events',
    owner: 'user_id',
    update: 'outcome',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(securityEvents).values({ jti: hex(), issuer: 'https://accounts.google.com', eventTypes: [], payload: {}, userId: s.alice.id }),
  },
  {
    name: 'provider_keys',
    owner: 'user_id',
    update: 'provider',
    grants: { select: true, delete: true, update: true },
    seed: (h, s) => h.db.insert(providerKeys).values({ userId: s.alice.id, provider: 'openai', keyId: 'session', sealed: 'sealed' }),
  },
  {
    name: 'credit_purchases',
    owner: 'user_id',
    update: 'credits',
    grants: { select: true, delete: false, update: false },
    seed: (h, s) => h.db.insert(creditPurchases).values({ paymentId: `cs_${hex()}`, userId: s.alice.id, pack: 50, credits: 5 }),
  },
  {
    name: 'wallet_top_ups',
    owner: 'user_id',
    update: 'amount_cents',
    grants: { select: true, delete: false, update: false },
    seed: async (h, s) => {
      const id = crypto.randomUUID()
      await h.db.insert(paymentSessions).values({ id, walletAddress: `0x${hex()}`, source: 'card', chainId: 8453, token: '0x0', depositAmount: '1000' })
      return h.db.insert(walletTopUps).values({ paymentId: `cs_${hex()}`, userId: s.alice.id, walletAddress: '0xabc', amountCents: 1000, sessionId: id })
    },
  },
  {
    name: 'calendar_connections',
    owner: 'user_id',
    update: 'connected',
    grants: { select: true, delete: true, update: true },
    seed: (h, s) => h.db.insert(calendarConnections).values({ userId: s.alice.id, calendarId: 'alice@example.com', timezone: 'UTC', keyId: 'session', accessToken: 'sealed' }),
  },
  {
    name: 'stripe_events',
    owner: 'id',
    update: 'outcome',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(stripeEvents).values({ id: s.alice.id, type: 'invoice.paid', createdAt: new Date(), outcome: 'applied' }),
  },
  {
    name: 'subscription_deployments',
    owner: 'user_id',
    update: 'tier',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(subscriptionDeployments).values({ deployKey: `sub_${hex()}`, customerId: 'cus_1', tier: 'solo', memoryGb: 2, cpus: 1, userId: s.alice.id }),
  },
  {
    // The outbox of subscription deploys: service only (the Stripe webhook, checkout verify, the deploy sweep).
    name: 'subscription_deploy_outbox',
    owner: 'user_id',
    update: 'attempts',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) =>
      h.db.insert(subscriptionDeployOutbox).values({
        sessionId: `cs_${hex()}`,
        userId: s.alice.id,
        job: { tier: 'solo', stripeCustomerId: 'cus_1', subscriptionId: null, userId: s.alice.id },
      }),
  },
  {
    // The embedded queue's outbox: infrastructure, no user's rows; a message may carry a user's id in its body.
    name: 'queue_messages',
    owner: 'message_id',
    update: 'path',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) =>
      h.db.insert(queueMessages).values({ messageId: s.alice.id, path: '/api/queue/chat', body: JSON.stringify({ userId: s.alice.id }), notBefore: new Date(), retries: 3 }),
  },
  {
    name: 'queue_schedules',
    owner: 'id',
    update: 'path',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(queueSchedules).values({ id: s.alice.id, path: '/api/cron/watchdog', cron: '*/2 * * * *', body: '{}' }),
  },
  {
    name: 'agents',
    owner: 'user_id',
    update: 'name',
    grants: { select: true, delete: true, update: true },
    seed: (h, s) => h.db.insert(agents).values({ id: `agent-${s.alice.id}`, userId: s.alice.id, name: `a-${hex()}` }),
  },
  {
    name: 'agent_events',
    owner: 'user_id',
    update: 'reason',
    grants: { select: true, delete: false, update: false },
    seed: async (h, s) => {
      await h.db.insert(agents).values({ id: `agent-ev-${s.alice.id}`, userId: s.alice.id, name: `e-${hex()}` }).onConflictDoNothing()
      return h.db.insert(agentEvents).values({ agentId: `agent-ev-${s.alice.id}`, userId: s.alice.id, kind: 'status', toState: 'running' })
    },
  },
  {
    name: 'agent_watchdog',
    owner: 'user_id',
    update: 'state',
    grants: { select: false, delete: false, update: false },
    seed: async (h, s) => {
      await h.db.insert(agents).values({ id: `agent-wd-${s.alice.id}`, userId: s.alice.id, name: `w-${hex()}` }).onConflictDoNothing()
      return h.db.insert(agentWatchdog).values({ agentId: `agent-wd-${s.alice.id}`, userId: s.alice.id })
    },
  },
  {
    name: 'chat_jobs',
    owner: 'user_id',
    update: 'status',
    grants: { select: true, delete: false, update: true },
    seed: async (h, s) => {
      await h.db.insert(agents).values({ id: `agent-job-${s.alice.id}`, userId: s.alice.id, name: `j-${hex()}` }).onConflictDoNothing()
      return h.db.insert(chatJobs).values({ userId: s.alice.id, agentId: `agent-job-${s.alice.id}`, message: 'hello' })
    },
  },
  {
    name: 'permission_requests',
    owner: 'user_id',
    update: 'status',
    grants: { select: true, delete: false, update: true },
    seed: (h, s) => h.db.insert(permissionRequests).values({ userId: s.alice.id, agentId: 'a1', toolName: 'bash', reason: 'r' }),
  },
  {
    name: 'chain_payments',
    owner: 'payer',
    update: 'purpose',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) =>
      h.db.insert(chainPayments).values({ txHash: `0x${hex()}${hex()}`, purpose: 'mpp', reference: 'n', chainId: 8453, token: '0x0', payer: s.alice.id, recipient: '0x1', amount: '1' }),
  },
  {
    name: 'payment_sessions',
    owner: 'wallet_address',
    update: 'spent_amount',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) =>
      h.db.insert(paymentSessions).values({ id: `ps-${s.alice.id}`, walletAddress: s.alice.id, depositTxHash: `0x${hex()}`, chainId: 8453, token: '0x0', depositAmount: '100' }),
  },
  {
    name: 'payment_session_vouchers',
    owner: 'plugin_id',
    update: 'amount',
    grants: { select: false, delete: false, update: false },
    seed: async (h, s) => {
      await h.db
        .insert(paymentSessions)
        .values({ id: `ps-v-${s.alice.id}`, walletAddress: '0xabc', depositTxHash: `0x${hex()}`, chainId: 8453, token: '0x0', depositAmount: '100' })
        .onConflictDoNothing()
      return h.db.insert(paymentSessionVouchers).values({ sessionId: `ps-v-${s.alice.id}`, nonce: '1', cumulativeAmount: '1', amount: '1', pluginId: s.alice.id })
    },
  },
  {
    name: 'files',
    owner: 'user_id',
    update: 'status',
    grants: { select: true, delete: true, update: true },
    seed: async (h, s) => {
      await h.db.insert(agents).values({ id: `agent-file-${s.alice.id}`, userId: s.alice.id, name: `f-${hex()}` }).onConflictDoNothing()
      return h.db.insert(files).values({ userId: s.alice.id, agentId: `agent-file-${s.alice.id}`, filename: 'a.txt', storageKey: `k-${hex()}`, size: 1, mimeType: 'text/plain' })
    },
  },
  {
    name: 'storage_usage',
    owner: 'user_id',
    update: 'bytes',
    grants: { select: true, delete: false, update: true },
    seed: (h, s) => h.db.insert(storageUsage).values({ userId: s.alice.id, bytes: 10 }),
  },
  {
    name: 'skills',
    owner: 'author_user_id',
    update: 'downloads',
    grants: { select: true, delete: false, update: false },
    publicRead: true,
    seed: (h, s) => h.db.insert(skills).values({ name: `s-${hex()}`, nameKey: `s-${hex()}`, description: 'd', authorUserId: s.alice.id, scan: {} }),
  },
  {
    name: 'skill_ratings',
    owner: 'user_id',
    update: 'rating',
    grants: { select: true, delete: false, update: true },
    seed: async (h, s) => {
      const [skill] = await h.db.insert(skills).values({ name: `r-${hex()}`, nameKey: `r-${hex()}`, description: 'd', scan: {} }).returning()
      return h.db.insert(skillRatings).values({ skillId: skill.id, userId: s.alice.id, rating: 4 })
    },
  },
  {
    name: 'skill_installations',
    owner: 'user_id',
    update: 'enabled',
    grants: { select: true, delete: true, update: true },
    seed: async (h, s) => {
      await h.db.insert(agents).values({ id: `agent-skill-${s.alice.id}`, userId: s.alice.id, name: `k-${hex()}` }).onConflictDoNothing()
      const [skill] = await h.db.insert(skills).values({ name: `i-${hex()}`, nameKey: `i-${hex()}`, description: 'd', scan: {} }).returning()
      return h.db.insert(skillInstallations).values({ userId: s.alice.id, agentId: `agent-skill-${s.alice.id}`, skillId: skill.id })
    },
  },
  {
    name: 'social_posts',
    owner: 'user_id',
    update: 'body',
    grants: { select: true, delete: false, update: false },
    seed: async (h, s) => {
      await h.db.insert(agents).values({ id: `agent-post-${s.alice.id}`, userId: s.alice.id, name: `p-${hex()}` }).onConflictDoNothing()
      return h.db.insert(socialPosts).values({ userId: s.alice.id, agentId: `agent-post-${s.alice.id}`, body: 'hello' })
    },
  },
  {
    name: 'radio_sessions',
    owner: 'wallet',
    update: 'status',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(radioSessions).values({ wallet: s.alice.id, name: 'DJ', accessPath: 'holding', expiresAt: future() }),
  },
  {
    name: 'radio_guest_passes',
    owner: 'wallet',
    update: 'expires_at',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(radioGuestPasses).values({ wallet: s.alice.id, expiresAt: future() }),
  },
  {
    name: 'mux_events',
    owner: 'id',
    update: 'type',
    grants: { select: false, delete: false, update: false },
    seed: (h, s) => h.db.insert(muxEvents).values({ id: s.alice.id, type: 'video.live_stream.active' }),
  },
  {
    name: 'user_wallets',
    owner: 'user_id',
    update: 'network',
    grants: { select: true, delete: false, update: false },
    seed: (h, s) => h.db.insert(userWallets).values({ userId: s.alice.id, address: '0xabc', walletId: 'w1', network: 'base' }),
  },
]
