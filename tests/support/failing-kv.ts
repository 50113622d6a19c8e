import { DependencyUnavailableError } from '../../lib/http/dependency'
import type { Kv, LimitResult, LimitRule, RateLimiter } from '../../lib/kv/types'
import type { KvScript } from '../../lib/kv/script'

/**
 * An in-process kv store that can be switched down: while `down`, every call throws what the Upstash adapter throws
 * when its store does not answer (`DependencyUnavailableError('kv')`, a failed fetch as its cause); back up, calls
 * reach the wrapped store again.
 */
export class FailingKv implements Kv, RateLimiter {
  down = false

  constructor(private readonly inner: Kv & RateLimiter) {}

  private check() {
    if (this.down) throw new DependencyUnavailableError('kv', { cause: new TypeError('fetch failed') })
  }

  async get<T>(key: string) {
    this.check()
    return this.inner.get<T>(key)
  }
  async set(key: string, value: unknown, opts?: { ttlMs?: number; nx?: boolean }) {
    this.check()
    return this.inner.set(key, value, opts)
  }
  async take<T>(key: string) {
    this.check()
    return this.inner.take<T>(key)
  }
  async del(key: string) {
    this.check()
    return this.inner.del(key)
  }
  async incr(key: string, by: number, ttlMs: number) {
    this.check()
    return this.inner.incr(key, by, ttlMs)
  }
  async eval<R>(script: KvScript<R>, keys: string[], args: (string | number)[]) {
    this.check()
    return this.inner.eval(script, keys, args)
  }
  async limit(rule: LimitRule, identifier: string): Promise<LimitResult> {
    this.check()
    return this.inner.limit(rule, identifier)
  }
}
