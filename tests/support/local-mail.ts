/**
 * The local server's dev outbox (no mail provider) prints each mail as one `mail.outbox` JSON line with its
 * recipient and text: what a user of `npm start` reads to verify their address. These find a mail's token there.
 */
export function mailedToken(output: string, email: string, path: 'verify-email' | 'reset-password' = 'verify-email'): string {
  const lines = output.split('\n').filter((l) => l.includes('"mail.outbox"'))
  for (const line of lines.reverse()) {
    const mail = JSON.parse(line.slice(line.indexOf('{'))) as { to?: string; text?: string }
    const token = mail.to?.toLowerCase() === email.toLowerCase() && mail.text?.match(new RegExp(`/${path}\\?token=([\\w-]+)`))?.[1]
    if (token) return token
  }
  throw new Error(`no ${path} mail to ${email} in the server's output`)
}
