import { errorResponse } from '../../lib/http/openapi'
import { JOB_FINISHED, LEASE_EXPIRED, LEASE_NOT_HELD } from './jobs'

/** What `complete` and `fail` share, said once for both routes. */
export const LEASE_END_DOC =
  'Dual authentication as the claim (session cookie, else `Authorization: Bearer <API key>`); another user’s job reads ' +
  'as absent (404). Only the holder of the job’s current lease may end it: `leaseId` must be the one the claim ' +
  'answered, and its `leaseExpiresAt` not yet passed. A job ends once: of a `complete` and a `fail`, or two of ' +
  'either, however close, one is applied and every other gets 409 `Job already finished` (a replay too). After the ' +
  'lease ran out the job is back in the queue: the late holder gets 409 `LEASE_LOST` (`Lease expired`), and once ' +
  'another claim took it, `Lease not held`.'

export const LEASE_END_RESPONSES = {
  401: errorResponse('No session and no valid API key (`UNAUTHORIZED`)'),
  403: errorResponse('A cookie-authenticated call sent from a foreign `Origin` (`ORIGIN_NOT_ALLOWED`)'),
  404: errorResponse('`Job not found`: no such job of the caller’s (`NOT_FOUND`)'),
  409: errorResponse(
    `\`${JOB_FINISHED}\` (\`INVALID_TRANSITION\`); \`${LEASE_EXPIRED}\` or \`${LEASE_NOT_HELD}\` (\`LEASE_LOST\`): the lease ran out, or is not the job’s current one`,
  ),
}
