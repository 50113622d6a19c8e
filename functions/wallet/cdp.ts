import type { Config } from '../../lib/config'

/** Coinbase Developer Platform (agentic, server-managed wallets): configured when both API key parts are set. */
export interface CdpSettings {
  apiKeyId: string
  projectId: string | null
}

/** The CDP settings, or null when CDP is not configured. The key secret stays in config: nothing here shows it. */
export function cdpSettings(config: Pick<Config, 'CDP_API_KEY_ID' | 'CDP_API_KEY_SECRET' | 'CDP_PROJECT_ID'>): CdpSettings | null {
  if (!config.CDP_API_KEY_ID || !config.CDP_API_KEY_SECRET) return null
  return { apiKeyId: config.CDP_API_KEY_ID, projectId: config.CDP_PROJECT_ID ?? null }
}

/** Chains a managed wallet lives on (the platform's primary chain only). */
export const CDP_SUPPORTED_CHAINS = ['base'] as const

/** What an agentic wallet is for on this platform, as `GET /api/wallet` lists it. */
export const AGENTIC_WALLET_FEATURES = ['managed-wallet', 'balances', 'card-top-up'] as const

export const CDP_NOT_CONFIGURED = 'CDP not configured'
/** Creating or importing CDP accounts is not wired to the CDP API yet: refused honestly rather than faked. */
export const CDP_NOT_AVAILABLE = 'CDP wallet creation is not available yet'
