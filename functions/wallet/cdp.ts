import type { Config } from '../../lib/config'

/**
 * Coinbase Developer Platform (agentic, server-managed wallets): configured when both API key parts are set. Writing
 * accounts also needs the Wallet Secret (`CDP_WALLET_SECRET`), checked when a write is made (functions/wallet/cdp-client.ts).
 */
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
/** The network a new managed wallet is recorded on (a CDP EVM account has one address on every EVM chain). */
export const CDP_NETWORK = CDP_SUPPORTED_CHAINS[0]

/** What an agentic wallet is for on this platform, as `GET /api/wallet` lists it. */
export const AGENTIC_WALLET_FEATURES = ['managed-wallet', 'balances', 'card-top-up'] as const

export const CDP_NOT_CONFIGURED = 'CDP not configured'

/**
 * The RSA public key Coinbase publishes for encrypting a private key sent to `POST /v2/evm/accounts/import` (RSA-OAEP
 * with SHA-256, as the CDP SDKs do): only CDP's enclave holds its private half. `CDP_IMPORT_PUBLIC_KEY` replaces it.
 */
export const CDP_IMPORT_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEA2Fxydgm/ryYk0IexQIuL
9DKyiIk2WmS36AZ83a9Z0QX53qdveg08b05g1Qr+o+COoYOT/FDi8anRGAs7rIyS
uigrjHR6VrmFjnGrrTr3MINwC9cYQFHwET8YVGRq+BB3iFTB1kIb9XJ/vT2sk1xP
hJ6JihEwSl4DgbeVjqw59wYqrNg355oa8EdFqkmfGU2tpbM56F8iv1F+shwkGo3y
GhW/UOQ5OLauXvsqo8ranwsK+lqFblLEMlNtn1VSJeO2vMxryeKFrY2ob8VqGchC
ftPJiLWs2Du6juw4C1rOWwSMlXzZ6cNMHkxdTcEHMr3C2TEHgzjZY41whMwNTB8q
/pxXnIbH77caaviRs4R/POe8cSsznalXj85LULvFWOIHp0w+jEYSii9Rp9XtHWAH
nrK/O/SVDtT1ohp2F+Zg1mojTgKfLOyGdOUXTi95naDTuG770rSjHdL80tJBz1Fd
+1pzGTGXGHLZQLX5YZm5iuy2cebWfF09VjIoCIlDB2++tr4M+O0Z1X1ZE0J5Ackq
rOluAFalaKynyH3KMyRg+NuLmibu5OmcMjCLK3D4X1YLiN2OK8/bbpEL8JYroDwb
EXIUW5mGS06YxfSUsxHzL9Tj00+GMm/Gvl0+4/+Vn8IXVHjQOSPNEy3EnqCiH/OW
8v0IMC32CeGrX7mGbU+MzlsCAwEAAQ==
-----END PUBLIC KEY-----`
