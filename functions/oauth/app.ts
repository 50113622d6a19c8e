import { createRouter } from '../../lib/app'

export const app = createRouter()
