import { goneRoute } from '../../../lib/http/gone'

export const generate = goneRoute('/api/invite/generate', '/api/invite', { operationId: 'generateInviteRemoved', tag: 'Invites' })
export const validate = goneRoute('/api/invite/validate', '/api/invites/verify', { operationId: 'validateInviteRemoved', tag: 'Invites' })
