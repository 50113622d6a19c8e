import type { LimitRule } from '../kv/types'

export interface NamedLimit extends LimitRule {
  message: string
}

/** Rate limits from the spec's tables ("Limits" in both documents); messages exact where the spec gives one. */
export const limits = {
  backend: { name: 'backend', limit: 120, windowSec: 60, message: 'Too many requests, please slow down.' },
  backendAi: { name: 'backend-ai', limit: 30, windowSec: 60, message: 'AI rate limit exceeded.' },
  deployments: { name: 'deployments', limit: 5, windowSec: 60, message: 'Deployment rate limit exceeded.' },
  gateway: { name: 'gateway', limit: 100, windowSec: 60, message: 'Too many requests' },
  agents: { name: 'agents', limit: 100, windowSec: 60, message: 'Too many requests' },
  chat: { name: 'chat', limit: 60, windowSec: 60, message: 'Too many requests' },
  instance: { name: 'instance', limit: 30, windowSec: 60, message: 'Too many requests' },
  provision: { name: 'provision', limit: 5, windowSec: 60, message: 'Too many requests' },
  login: { name: 'login', limit: 5, windowSec: 15 * 60, message: 'Too many login attempts. Try again later.' },
  register: { name: 'register', limit: 10, windowSec: 60 * 60, message: 'Too many requests' },
  passwordReset: { name: 'password-reset', limit: 5, windowSec: 15 * 60, message: 'Too many requests' },
  // Per user: each resend is a mail sent to an address that may not be the user's.
  verifyEmailResend: { name: 'verify-email-resend', limit: 3, windowSec: 60 * 60, message: 'Too many verification emails. Try again later.' },
  // Per IP: tokens are 256-bit, this only keeps the endpoint from being a free database load.
  verifyEmail: { name: 'verify-email', limit: 20, windowSec: 15 * 60, message: 'Too many requests' },
  // Per user: each create is a bcrypt hash (~120 ms of CPU at cost 10); the 10-key cap is refused before it.
  apiKeyCreate: { name: 'api-key-create', limit: 10, windowSec: 60, message: 'Too many requests' },
} satisfies Record<string, NamedLimit>
