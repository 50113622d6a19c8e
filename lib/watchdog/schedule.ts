import type { Queue } from '../queue/types'
import { WATCHDOG_CRON, WATCHDOG_PATH } from './sweep'

/**
 * Registers the watchdog's cron (id `watchdog`: registering again replaces it). The local server calls it at
 * start; in production it is the QStash schedule of README "The watchdog" (same id, path, cron and body).
 */
export const registerWatchdogSchedule = (queue: Queue) => queue.schedule('watchdog', WATCHDOG_PATH, WATCHDOG_CRON, {})
