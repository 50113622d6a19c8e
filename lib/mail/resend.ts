import type { Mailer, MailMessage } from '../context'
import { deadline } from '../deadline'

export interface ResendOptions {
  apiKey: string
  /** `https://api.resend.com`, or a compatible endpoint. */
  apiUrl: string
  /** `Name <address>` on a domain verified with the provider. */
  from: string
  fetch?: typeof fetch
  timeoutMs?: number
}

/** Resend's error body: `{statusCode, name, message}`. */
interface ResendError {
  name?: string
  message?: string
}

export class MailProviderError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
    this.name = 'MailProviderError'
  }
}

/**
 * Sends through Resend's REST API (`POST /emails`, answer `{id}`). Resend rejects requests without a
 * `User-Agent` (403), and workerd's fetch sets none, so one is always sent.
 */
export class ResendMailer implements Mailer {
  private endpoint: string

  constructor(private opts: ResendOptions) {
    this.endpoint = `${opts.apiUrl.replace(/\/+$/, '')}/emails`
  }

  async send(msg: MailMessage) {
    // The whole exchange, the refusal's body included, within the timeout.
    const bound = deadline(this.opts.timeoutMs ?? 10_000)
    try {
      const res = await (this.opts.fetch ?? fetch)(this.endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.opts.apiKey}`,
          'content-type': 'application/json',
          'user-agent': 'agent-platform-backend/1.0',
        },
        body: JSON.stringify({ from: this.opts.from, to: [msg.to], subject: msg.subject, text: msg.text }),
        signal: bound.signal,
      })
      if (res.ok) {
        await res.body?.cancel() // the `{id}` is not needed; release the connection
        return
      }
      // The provider's own words, never the request: the message body may hold a reset link.
      const err = (await res.json().catch(() => ({}))) as ResendError
      const why = [err.name, err.message].filter(Boolean).join(': ') || res.statusText
      throw new MailProviderError(res.status, `Resend refused ${msg.kind} mail (${res.status}${why ? `: ${why}` : ''})`)
    } finally {
      bound.clear()
    }
  }
}
