import type { Config } from '../config'
import type { Db } from '../db/rls'
import { OutboxMailer } from './outbox'
import { ResendMailer } from './resend'
import type { Mailer } from '../context'

export type { Mailer, MailMessage } from '../context'

/** Resend when `RESEND_API_KEY` is set, else the database outbox (logging bodies outside production). */
export const mailerFor = (config: Config, db: () => Db): Mailer =>
  config.RESEND_API_KEY
    ? new ResendMailer({ apiKey: config.RESEND_API_KEY, apiUrl: config.RESEND_API_URL, from: config.MAIL_FROM })
    : new OutboxMailer(db, { logBody: config.NODE_ENV !== 'production' })
