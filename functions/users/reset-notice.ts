import { oneLine } from '../../lib/mail/notice'
import type { ApiKeyListed } from '../../lib/auth/mailbox-proof'
import type { MailMessage } from '../../lib/context'

export interface ResetOutcome {
  userId: string
  email: string
  passkeysRemoved: string[]
  /**
   * Revoked: every key when the email was not verified before the reset (`firstProof`, the pre-hijack case), else
   * those made before it was first verified. Kept: the others.
   */
  keys: { firstProof: boolean; kept: ApiKeyListed[]; revoked: ApiKeyListed[] }
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
  const lines = (list: ApiKeyListed[]) =>
    list.map((k) => `- ${oneLine(k.name)} (${k.prefix}..., last used ${k.lastUsedAt ? k.lastUsedAt.toISOString() : 'never'})`).join('\n')
  if (o.keys.revoked.length) {
    const why = o.keys.firstProof
      ? 'Your email address was not verified before this reset'
      : 'These API keys were made before your email address was verified'
    parts.push(`${why}, so ${o.keys.firstProof ? 'your API keys' : 'they'} were revoked (anyone could have created them):\n${lines(o.keys.revoked)}\nCreate new ones after signing in at ${baseUrl}.`)
  }
  if (o.keys.kept.length) {
    parts.push(
      `Your API keys still work, so deployed runtimes keep running:\n${lines(o.keys.kept)}\n` +
        `If you do not recognise one, revoke it after signing in at ${baseUrl} (API keys).`,
    )
  }
  parts.push('If you did not reset your password, ask for a new reset link now: it signs out whoever did.')
  return { to: o.email, kind: 'password-reset-done', subject: 'Your password was reset', text: parts.join('\n\n') }
}
