import { mailOutbox } from '../../schema'
import type { Db } from '../db/client'
import { asService } from '../db/rls'
import type { Mailer, MailMessage } from './types'

export interface OutboxOptions {
  /** Log the body too (links and tokens included): local development only. */
  logBody: boolean
}

/**
 * The dev outbox: keeps each message in `mail_outbox` (service role; users cannot read it) and logs one
 * line. The database is taken lazily so that building services never opens a connection.
 */
export class OutboxMailer implements Mailer {
  constructor(
    private db: () => Db,
    private opts: OutboxOptions,
  ) {}

  async send(msg: MailMessage) {
    const [row] = await asService(this.db(), 'mailOutbox', (tx) =>
      tx.insert(mailOutbox).values({ to: msg.to, subject: msg.subject, text: msg.text, kind: msg.kind }).returning({ id: mailOutbox.id }),
    )
    // Production logs get no body (it may carry a reset link) and no address (personal data).
    const detail = this.opts.logBody ? ` to ${msg.to} "${msg.subject}": ${msg.text.replace(/\s+/g, ' ').trim()}` : ''
    console.info(`[mail outbox] ${msg.kind} ${row.id}${detail}`)
  }
}
