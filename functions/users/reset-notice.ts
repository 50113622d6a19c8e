import { oneLine } from '../../lib/mail/notice'
import type { MailMessage } from '../../lib/mail/types'

export interface ResetOutcome {
  userId: string
  email: string
  passkeysRemoved: string[]
  /** Kept when the email was verified before the reset; revoked (the pre-hijack case) otherwise. */
  keys: { kept: boolean; list: Array<{ name: string; prefix: string; lastUsedAt: Date | null }> }
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`

/** What a reset did, told to the mailbox that proved it: so a kept API key or a removed passkey is never a surprise. */
export function resetDoneMail(o: ResetOutcome, baseUrl: string): MailMessage {
  const parts = ['The password of your account was just reset, and every session was signed out: sign in again with the new password.']
  if (o.passkeysRemoved.length) {
    parts.push(
      `${plural(o.passkeysRemoved.length, 'passkey')} removed, so no one who added one can sign in with it: ` +
        `${o.passkeysRemoved.map((l) => `"${oneLine(l)}"`).join(', ')}. Add your own again after signing in.`,
    )
  }
  if (o.keys.list.length) {
    const lines = o.keys.list.map((k) => `- ${oneLine(k.name)} (${k.prefix}..., last used ${k.lastUsedAt ? k.lastUsedAt.toISOString() : 'never'})`)
    parts.push(
      o.keys.kept
        ? `Your API keys still work, so deployed runtimes keep running:\n${lines.join('\n')}\n` +
            `If you do not recognise one, revoke it after signing in at ${baseUrl} (API keys).`
        : `Your email address was not verified before this reset, so your API keys were revoked (anyone could ` +
            `have created them):\n${lines.join('\n')}\nCreate new ones after signing in at ${baseUrl}.`,
    )
  }
  parts.push('If you did not reset your password, ask for a new reset link now: it signs out whoever did.')
  return { to: o.email, kind: 'password-reset-done', subject: 'Your password was reset', text: parts.join('\n\n') }
}
