import { PAID_ACCESS_RULE, PLAN_REQUIRED_DOC } from '../../../lib/auth/plan'
import { errorResponse } from '../../../lib/http/openapi'
import { instanceActionHandler, instanceActionRoute } from '../lifecycle'

export const route = instanceActionRoute(
  'factory-reset',
  'factoryResetInstance',
  'Factory-reset the caller’s instance',
  'Clears the runtime’s memory through its gateway (the runtime must be reachable: 502 otherwise, nothing changed), then redeploys it from the current image and configuration. The agent is recorded `starting`. ' +
    `Needs paid access at the moment of use (${PAID_ACCESS_RULE}).`,
  { 402: errorResponse(PLAN_REQUIRED_DOC) },
)
export const handler = instanceActionHandler('factory-reset')
