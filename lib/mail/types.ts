/** What the platform mails. `kind` names the template, for the outbox and for logs. */
export interface MailMessage {
  to: string
  subject: string
  text: string
  kind: string
}

/** Mail port: a real provider in production (Resend), the database outbox otherwise. */
export interface Mailer {
  /** Resolves once the message is accepted (stored or handed to the provider); throws otherwise. */
  send(msg: MailMessage): Promise<void>
}
