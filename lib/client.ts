// Typed clients for the two APIs: routes, parameters, bodies and responses come from the apps' own types, so a
// renamed route or a wrong body is a compile error in the caller. Web-standard (fetch), usable from a browser.
import { type ClientRequestOptions, hc } from 'hono/client'
import type { BackendApp } from '../functions/backend/app'
import type { WebApp } from '../functions/web'

export type { BackendApp, WebApp }

/** The web API at `baseUrl` (e.g. `https://app.example.com`); `init.fetch` may route to an in-process app. */
export const createWebClient = (baseUrl: string, init?: ClientRequestOptions) => hc<WebApp>(baseUrl, init)

/** The backend API at `baseUrl` (e.g. `https://backend.example.com`). */
export const createBackendClient = (baseUrl: string, init?: ClientRequestOptions) => hc<BackendApp>(baseUrl, init)
