import { goneRoute } from '../../../lib/http/gone'

export const { route, handler } = goneRoute('/api/auth/google/risc', '/api/security/risc', { operationId: 'receiveRiscEventLegacy', tag: 'Security' })
