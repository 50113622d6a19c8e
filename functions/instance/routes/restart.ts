import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { errorResponse } from '../../../lib/http/openapi'
import { instanceActionHandler, instanceActionRoute } from '../lifecycle'

export const route = instanceActionRoute(
  'restart',
  'restartInstance',
  'Restart the caller’s instance',
  `Restarts the runtime through the provider; the agent is recorded \`starting\` until probes say otherwise. Needs paid access at the moment of use (${PAID_ACCESS_RULE}).`,
  { 402: errorResponse(PLAN_REQUIRED_DOC) },
)
export const handler = instanceActionHandler('restart')
