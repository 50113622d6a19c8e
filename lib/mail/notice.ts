import type { AppContext, MailMessage } from '../context'
import { errorFields, log, type LogFields } from '../log'

/**
 * Sends a mail the request does not depend on (a welcome, a verification link, a security notice) without failing the request that caused it:
 * the change stands either way. The logged error names the kind, never the body (it may hold links).
 */
export async function sendNotice(c: AppContext, msg: MailMessage, fields: LogFields = {}) {
  try {
    await c.var.services.mail.send(msg)
  } catch (e) {
    log.error('mail.notice_failed', { requestId: c.var.requestId, kind: msg.kind, ...fields, ...errorFields(e) })
  }
}

/** User text (a label, a key name) as one line of a mail: no forged paragraphs. */
export const oneLine = (s: string) => s.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').trim()
