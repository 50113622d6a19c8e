import { mailOutbox } from '../../schema'
import type { Db } from '../db/rls'
import { asService } from '../db/rls'
import { log } from '../log'
import type { Mailer, MailMessage } from '../context'

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
    log.info('mail.outbox', { kind: msg.kind, id: row.id, ...(this.opts.logBody ? { to: msg.to, subject: msg.subject, text: msg.text } : {}) })
  }
}
