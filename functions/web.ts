import type { Router } from '../lib/app'
import { app as auth } from './auth/app'
import { app as devices } from './devices/app'
import { app as farcaster } from './farcaster/app'
import { app as health } from './health/app'
import { app as invites } from './invites/app'
import { app as keys } from './keys/app'
import { app as oauth } from './oauth/app'
import { app as passkeys } from './passkeys/app'
import { app as users } from './users/app'
import { app as walletAuth } from './wallet-auth/app'

/** Every web family's routes, in mounting order: the local server mounts them all; docs describes them all. */
export const webFamilies: Record<string, Router> = { health, auth, users, keys, invites, devices, passkeys, walletAuth, oauth, farcaster }
