import { oneLine } from '../../lib/mail/notice'
import type { MailMessage } from '../../lib/context'

export const passkeyAddedMail = (to: string, label: string, baseUrl: string): MailMessage => ({
  to,
  kind: 'passkey-added',
  subject: 'A passkey was added to your account',
  text:
    `A passkey named "${oneLine(label)}" was just added to your account at ${baseUrl}. It signs in without ` +
    `your password.\n\nIf this was you, there is nothing to do.\n\n` +
    `If it was not, someone has used your account: reset your password ("Forgot password" on the sign-in page). ` +
    `A reset signs out every session and removes every passkey. You can also remove this passkey yourself from ` +
    `your account's passkey list.`,
})
