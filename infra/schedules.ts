import { CHAT_SWEEP_CRON, CHAT_SWEEP_PATH } from '../functions/chat/sweep'
import { DEPLOY_SWEEP_CRON, DEPLOY_SWEEP_PATH } from '../functions/stripe/deploy-outbox'
import { HEARTBEAT_CRON, HEARTBEAT_PATH } from '../functions/cron/heartbeat-sync'
import { RADIO_EXPIRE_PATH, RADIO_SWEEP_CRON } from '../functions/radio/expire'
import { WATCHDOG_CRON, WATCHDOG_PATH } from '../lib/watchdog/deps'
import type { Config } from '../lib/config'
import type { Queue } from '../lib/context'

interface CronSchedule {
  id: string
  path: string
  cron: string
  body: unknown
  /** The settings the receiver needs to do anything: without them the cron is not registered. */
  needs?: (config: Config) => boolean
}

/**
 * Every cron of the platform: id, receiver path, cron, body. The local server registers at start (in-process
 * scheduler) those whose settings are present; in production they are the QStash schedules of README "Crons" (same
 * ids, so registering again replaces).
 */
export const CRON_SCHEDULES: readonly CronSchedule[] = [
  { id: 'watchdog', path: WATCHDOG_PATH, cron: WATCHDOG_CRON, body: {} },
  { id: 'heartbeat', path: HEARTBEAT_PATH, cron: HEARTBEAT_CRON, body: {} },
  // Chat jobs still `queued` long after their last change: their queue message was lost, publish it again.
  { id: 'chat-queued-sweep', path: CHAT_SWEEP_PATH, cron: CHAT_SWEEP_CRON, body: {} },
  // Subscription deploys of applied checkouts the queue has not taken: publish them again. Only with Stripe: without
  // it no checkout is ever applied, so the outbox stays empty.
  { id: 'subscription-deploy-sweep', path: DEPLOY_SWEEP_PATH, cron: DEPLOY_SWEEP_CRON, body: {}, needs: (c) => !!c.STRIPE_SECRET_KEY },
  // Only with Mux: without it no DJ session can be created, so there is nothing to expire.
  { id: 'radio-expiry-sweep', path: RADIO_EXPIRE_PATH, cron: RADIO_SWEEP_CRON, body: {}, needs: (c) => !!(c.MUX_TOKEN_ID && c.MUX_TOKEN_SECRET) },
]

/** The crons `config` has what they need for. */
export const configuredSchedules = (config: Config) => CRON_SCHEDULES.filter((s) => s.needs?.(config) ?? true)

export const registerSchedules = (queue: Queue, config: Config) =>
  Promise.all(configuredSchedules(config).map((s) => queue.schedule(s.id, s.path, s.cron, s.body)))
