import type { PublishedMessage } from '../../support/qstash-server'
import { waitFor } from '../../support/wait'
import type { WorkerdPlatform } from '../../support/workerd-platform'

/** Waits until QStash has delivered a message to `path` (`n` of them), or failed one for good; those messages. */
export async function delivered(p: WorkerdPlatform, path: string, n = 1) {
  const to = () => p.qstash.published.filter((m) => new URL(m.destination).pathname === path)
  await waitFor(() => to().filter((m) => m.state !== 'pending').length >= n, { ms: 15_000, what: `QStash delivery to ${path}` })
  return to()
}

/** Fires the cron `scheduleId` (as its minute came) and waits for its delivery to be answered. */
export async function fire(p: WorkerdPlatform, scheduleId: string): Promise<PublishedMessage> {
  const msg = p.qstash.triggerSchedule(scheduleId)
  await waitFor(() => msg.state !== 'pending', { ms: 15_000, what: `cron ${scheduleId}` })
  return msg
}
