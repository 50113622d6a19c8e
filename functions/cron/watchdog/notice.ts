import { oneLine } from '../../../lib/mail/notice'
import type { MailMessage } from '../../../lib/context'

/** The one mail an agent's owner gets when the watchdog gives up repairing it (`crash_loop`). */
export const crashLoopMail = (to: string, agent: { id: string; name: string }, crashes: number, windowMinutes: number, baseUrl: string): MailMessage => ({
  to,
  kind: 'agent-crash-loop',
  subject: `Your agent "${oneLine(agent.name).slice(0, 80)}" keeps crashing`,
  text:
    `Your agent "${oneLine(agent.name)}" (${agent.id}) crashed ${crashes} times within ${windowMinutes} minutes, so the ` +
    `platform has stopped repairing it automatically.\n\nOpen your dashboard at ${baseUrl} to look at its logs and ` +
    `diagnostics, then restart it (or reset it) once the cause is fixed. The platform keeps checking it and marks ` +
    `it healthy again as soon as it answers.`,
})
