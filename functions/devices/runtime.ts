import { ApiError } from '../../lib/http/errors'

/*
 * The deprecated runtime proxy forwards to the user's agent runtime and answers 502 when it takes longer
 * than these (spec). Agents do not exist yet, so nothing is forwarded: when they land, look up the
 * caller's runtime URL and bound its fetch with `deadline(...)` (lib/deadline.ts) and these.
 */
export const RUNTIME_LIST_TIMEOUT_MS = 10_000
export const RUNTIME_ACTION_TIMEOUT_MS = 15_000

/** Until agents exist, every caller has none. */
export const noAgent = () => new ApiError('NOT_FOUND', 'No agent found')
