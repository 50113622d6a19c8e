import type { Config } from '../../config'
import { QStashQueue, QStashVerifier } from '../../queue/qstash'
import { notConfigured } from '../managed'

/** QStash publishing and schedules, and the verifier for its signed deliveries. */
export const qstashStore = (config: Config) => ({
  queue: new QStashQueue(config.QSTASH_TOKEN ?? notConfigured('Queue'), config.PUBLIC_URL ?? config.baseUrl, config.QSTASH_URL, {
    timeoutMs: config.QSTASH_TIMEOUT_MS,
  }),
  verifier: qstashVerifier(config),
})

export const qstashVerifier = (config: Config) => {
  const current = config.QSTASH_CURRENT_SIGNING_KEY ?? notConfigured('Queue signing keys')
  return new QStashVerifier(current, config.QSTASH_NEXT_SIGNING_KEY ?? current)
}
