import { instanceActionHandler, instanceActionRoute } from '../lifecycle'

export const route = instanceActionRoute(
  'factory-reset',
  'factoryResetInstance',
  'Factory-reset the caller’s instance',
  'Clears the runtime’s memory through its gateway (the runtime must be reachable: 502 otherwise, nothing changed), then redeploys it from the current image and configuration. The agent is recorded `starting`.',
)
export const handler = instanceActionHandler('factory-reset')
