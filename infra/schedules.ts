import { HEARTBEAT_CRON, HEARTBEAT_PATH } from '../functions/cron/heartbeat-sync'
import { RADIO_EXPIRE_PATH, RADIO_SWEEP_CRON } from '../functions/radio/expire'
import { WATCHDOG_CRON, WATCHDOG_PATH } from '../lib/watchdog/deps'
import type { Queue } from '../lib/context'

/**
 * Every cron of the platform: id, receiver path, cron, body. The local server registers them at start (in-process
 * scheduler); in production they are the QStash schedules of README "Crons" (same ids, so registering again replaces).
 */
export const CRON_SCHEDULES = [
  { id: 'watchdog', path: WATCHDOG_PATH, cron: WATCHDOG_CRON, body: {} },
  { id: 'heartbeat', path: HEARTBEAT_PATH, cron: HEARTBEAT_CRON, body: {} },
  { id: 'radio-expiry-sweep', path: RADIO_EXPIRE_PATH, cron: RADIO_SWEEP_CRON, body: {} },
] as const

export const registerSchedules = (queue: Queue) => Promise.all(CRON_SCHEDULES.map((s) => queue.schedule(s.id, s.path, s.cron, s.body)))
