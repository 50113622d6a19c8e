import type { Config } from '../../config'
import { RailwayProvider } from '../../runtime/railway'
import { notConfigured } from '../managed'

/** Agent runtimes on Railway: RUNTIME_PROVIDER_TOKEN with the project and environment it deploys into. */
export const railwayStore = (config: Config) =>
  new RailwayProvider({
    token: config.RUNTIME_PROVIDER_TOKEN ?? notConfigured('Runtime provider'),
    projectId: config.RAILWAY_PROJECT_ID ?? notConfigured('Runtime provider'),
    environmentId: config.RAILWAY_ENVIRONMENT_ID ?? notConfigured('Runtime provider'),
    tokenKind: config.RAILWAY_TOKEN_KIND,
    apiUrl: config.RAILWAY_API_URL,
    timeoutMs: config.RAILWAY_TIMEOUT_MS,
  })
