import { instanceActionHandler, instanceActionRoute } from '../lifecycle'

export const route = instanceActionRoute('restart', 'restartInstance', 'Restart the caller’s instance', 'Restarts the runtime through the provider; the agent is recorded `starting` until probes say otherwise.')
export const handler = instanceActionHandler('restart')
