import { CHAT_SWEEP_CRON, CHAT_SWEEP_PATH } from '../functions/chat/sweep'
import type { Queue } from '../lib/context'

/**
 * The crons that drive again records waiting on a queue message that may be lost (README "Crons"): registered at
 * start next to infra/schedules.ts's, and in production as QStash schedules with the same ids.
 */
export const SWEEP_SCHEDULES = [{ id: 'chat-queued-sweep', path: CHAT_SWEEP_PATH, cron: CHAT_SWEEP_CRON, body: {} }] as const

export const registerSweepSchedules = (queue: Queue) => Promise.all(SWEEP_SCHEDULES.map((s) => queue.schedule(s.id, s.path, s.cron, s.body)))
