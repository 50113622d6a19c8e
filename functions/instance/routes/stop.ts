import { instanceActionHandler, instanceActionRoute } from '../lifecycle'

export const route = instanceActionRoute('stop', 'stopInstance', 'Stop the caller’s instance', 'Stops the runtime through the provider; the agent is recorded `stopped`.')
export const handler = instanceActionHandler('stop')
