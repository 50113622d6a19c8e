import { asc, eq, lt, sql } from 'drizzle-orm'
import type { Queue, Services } from '../../lib/context'
import { asService, type CrossUserPurpose, type Db } from '../../lib/db/rls'
import { errorFields, log } from '../../lib/log'
import { subscriptionDeployOutbox } from '../../schema'
import { SUBSCRIPTION_DEPLOY_PATH, type SubscriptionDeployJob } from './subscription'

/** Where the deploy sweep's cron delivers (`POST`, signed). */
export const DEPLOY_SWEEP_PATH = '/api/queue/subscription-deploy/sweep'
/** Every 5 minutes. */
export const DEPLOY_SWEEP_CRON = '*/5 * * * *'
/**
 * A deploy still in the outbox this long after its last try is one the queue has not taken: longer than the publish
 * right after the commit takes (its deadline included), so the sweep never races it.
 */
export const DEPLOY_SWEEP_AFTER_MS = 2 * 60_000
/** Deploys published again per sweep, oldest first; the rest wait for the next run. */
export const DEPLOY_SWEEP_BATCH = 100
/** The queue's retries of one deploy delivery (the receiver answers 502 while the backend fails). */
const DEPLOY_RETRIES = 5

/** Who touches the outbox: the checkout that wrote the row (webhook, verify), or the sweep. */
type OutboxPurpose = Extract<CrossUserPurpose, 'stripeWebhook' | 'subscriptionDeploySweep'>

/** A deploy written to the outbox by an applied plan checkout, to publish once its transaction has committed. */
export interface PendingDeploy {
  sessionId: string
  job: SubscriptionDeployJob
}

/**
 * Publishes a kept deploy (deduplicated by its Checkout Session), then deletes it from the outbox. A publish that
 * fails is recorded on the row (attempts, error, time) and left for the sweep; a delete that fails leaves the row for
 * the sweep too, whose publish the queue drops as a duplicate (and the backend's deploy is idempotent by
 * subscription). True when the queue took it.
 */
export async function publishDeploy(db: Db, queue: Queue, deploy: PendingDeploy, purpose: OutboxPurpose, now = Date.now()): Promise<boolean> {
  try {
    await queue.publish(SUBSCRIPTION_DEPLOY_PATH, deploy.job, { deduplicationId: deploy.sessionId, retries: DEPLOY_RETRIES })
  } catch (e) {
    log.error('stripe.deploy_publish_failed', { sessionId: deploy.sessionId, userId: deploy.job.userId, ...errorFields(e) })
    await asService(db, purpose, (tx) =>
      tx
        .update(subscriptionDeployOutbox)
        .set({ attempts: sql`${subscriptionDeployOutbox.attempts} + 1`, lastError: errorText(e), updatedAt: new Date(now) })
        .where(eq(subscriptionDeployOutbox.sessionId, deploy.sessionId)),
    ).catch((e2) => log.error('stripe.deploy_outbox_write_failed', { sessionId: deploy.sessionId, ...errorFields(e2) }))
    return false
  }
  await asService(db, purpose, (tx) => tx.delete(subscriptionDeployOutbox).where(eq(subscriptionDeployOutbox.sessionId, deploy.sessionId))).catch((e) =>
    log.warn('stripe.deploy_outbox_write_failed', { sessionId: deploy.sessionId, ...errorFields(e) }),
  )
  log.info('stripe.deploy_queued', { sessionId: deploy.sessionId, userId: deploy.job.userId })
  return true
}

/** Publishes each deploy of `deploys` (after their checkout's commit); failures stay in the outbox for the sweep. */
export async function publishDeploys(db: Db, queue: Queue, deploys: Iterable<PendingDeploy>) {
  for (const deploy of deploys) await publishDeploy(db, queue, deploy, 'stripeWebhook')
}

/**
 * Publishes again each deploy left in the outbox past `DEPLOY_SWEEP_AFTER_MS` since its last try, oldest first, at
 * most `DEPLOY_SWEEP_BATCH` a run.
 */
export async function sweepPendingDeploys(services: Pick<Services, 'db' | 'queue'>, now = Date.now()): Promise<{ found: number; published: number; failed: number }> {
  const due = await asService(services.db, 'subscriptionDeploySweep', (tx) =>
    tx
      .select({ sessionId: subscriptionDeployOutbox.sessionId, job: subscriptionDeployOutbox.job })
      .from(subscriptionDeployOutbox)
      .where(lt(subscriptionDeployOutbox.updatedAt, new Date(now - DEPLOY_SWEEP_AFTER_MS)))
      .orderBy(asc(subscriptionDeployOutbox.updatedAt))
      .limit(DEPLOY_SWEEP_BATCH),
  )
  let published = 0
  for (const row of due) if (await publishDeploy(services.db, services.queue, { sessionId: row.sessionId, job: row.job as SubscriptionDeployJob }, 'subscriptionDeploySweep', now)) published++
  const result = { found: due.length, published, failed: due.length - published }
  if (due.length) log.info('stripe.deploys_swept', result)
  return result
}

/** What is kept of a failed publish: the error's name and message, bounded. */
const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).slice(0, 500)
