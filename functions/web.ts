import type { Router } from '../lib/app'
import { app as health } from './health/app'

/** Every web family's routes, in mounting order: the local server mounts them all; docs describes them all. */
export const webFamilies: Record<string, Router> = { health }
