import { createPlatformApp, createRouter } from '../lib/app'
import type { ServiceProvider } from '../lib/context'
import { app as agents } from './agents/app'
import { app as auth } from './auth/app'
import { app as billing } from './billing/app'
import { app as calendar } from './calendar/app'
import { app as colony } from './colony/app'
import { app as chat } from './chat/app'
import { app as cron } from './cron/app'
import { app as devices } from './devices/app'
import { app as docs } from './docs/app'
import { app as farcaster } from './farcaster/app'
import { app as gateway } from './gateway/app'
import { app as files } from './files/app'
import { app as health } from './health/app'
import { app as instance } from './instance/app'
import { app as invites } from './invites/app'
import { app as keys } from './keys/app'
import { app as logs } from './logs/app'
import { app as oauth } from './oauth/app'
import { app as passkeys } from './passkeys/app'
import { app as social } from './social/app'
import { app as payments } from './payments/app'
import { app as permissions } from './permissions/app'
import { app as radio } from './radio/app'
import { app as skills } from './skills/app'
import { app as stripe } from './stripe/app'
import { app as users } from './users/app'
import { app as walletAuth } from './wallet-auth/app'
import { app as wallet } from './wallet/app'

/**
 * Every web family's routes, in mounting order: the web app mounts them all; docs describes them all.
 * One chain, so the route types reach `WebApp` (and the typed client) intact.
 */
export const webRoutes = createRouter()
  .route('/', health)
  .route('/', auth)
  .route('/', users)
  .route('/', keys)
  .route('/', invites)
  .route('/', devices)
  .route('/', passkeys)
  .route('/', walletAuth)
  .route('/', payments)
  .route('/', wallet)
  .route('/', oauth)
  .route('/', farcaster)
  .route('/', billing)
  .route('/', stripe)
  .route('/', calendar)
  .route('/', agents)
  .route('/', instance)
  .route('/', chat)
  .route('/', logs)
  .route('/', cron)
  .route('/', social)
  .route('/', colony)
  .route('/', permissions)
  .route('/', radio)
  .route('/', gateway)
  .route('/', skills)
  .route('/', files)

/** The whole web API on one app, as `npm start`, the tests and the bench serve it: every family, then the docs. */
export const createWebApp = (provide: ServiceProvider) => createPlatformApp(provide).route('/', webRoutes).route('/', docs)

/** The web API's type, for `hc<WebApp>` (lib/client.ts). */
export type WebApp = ReturnType<typeof createWebApp>
