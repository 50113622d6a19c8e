import type { Config } from '../../config'
import { UpstashKv } from '../../kv/upstash'
import { notConfigured } from '../managed'

/** Upstash Redis over REST: kv, dedup and rate limits. */
export const upstashStore = (config: Config) =>
  new UpstashKv(config.UPSTASH_REDIS_REST_URL ?? notConfigured('Rate limit store'), config.UPSTASH_REDIS_REST_TOKEN ?? '')
