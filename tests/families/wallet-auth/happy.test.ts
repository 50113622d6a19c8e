import { beforeAll, describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { pad } from 'viem'
import { createTempoMessage, parseTempoMessage } from '../../../functions/wallet-auth/tempo-message'
import { startAnvil } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import {
  getNonce,
  postSigned,
  postWalletAuth,
  sessionCookie,
  signInBase,
  signInTempo,
  siweMessage,
  tempoMessage,
  usersWithEmail,
  walletEmail,
  welcomeMails,
} from './flow'
import { smartAccounts } from './smart-accounts'

let smart: Awaited<ReturnType<typeof smartAccounts>>
const anvil = useFixture(() => startAnvil({ chainId: 8453 }))
// A second dashboard origin: messages still name the first one's host, their URI may be on either.
const h = useHarness(() => ({ env: { BASE_RPC_URL: anvil.url, APP_ORIGIN: 'http://localhost:3000,http://127.0.0.1:5173' } }))
beforeAll(async () => {
  smart = await smartAccounts(anvil)
})

describe('nonce', () => {
  it('GET and POST answer the same shape with fresh, uncached nonces', async () => {
    const seen = new Set<string>()
    for (const method of ['GET', 'POST', 'GET', 'POST']) {
      const res = await h.web.request('/api/auth/nonce', { method, headers: { 'cf-connecting-ip': '198.19.0.1' } })
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(res.headers.get('ratelimit-limit')).toBe('30')
      const body = await res.json()
      expect(Object.keys(body)).toEqual(['nonce'])
      expect(body.nonce).toMatch(/^[a-zA-Z0-9]{16,}$/)
      seen.add(body.nonce)
    }
    expect(seen.size).toBe(4)
  })
})

describe('Base (SIWE), EOA', () => {
  const wallet = privateKeyToAccount(generatePrivateKey())
  const email = walletEmail(wallet.address)

  it('creates the user with the wallet-derived email, mails the welcome, sets the session', async () => {
    const { res } = await signInBase(h, wallet)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toEqual({ ok: true, user: { id: expect.any(String), name: wallet.address } })
    const [row] = await usersWithEmail(h, email)
    expect(row).toMatchObject({ id: body.user.id, email: `${wallet.address.toLowerCase()}@wallet.localhost` })
    expect(row.trialEndsAt).toBeInstanceOf(Date)
    expect(await welcomeMails(h, email)).toMatchObject([{ kind: 'welcome' }])

    const setCookie = res.headers.get('set-cookie')!
    expect(setCookie).toMatch(/^service-session=[0-9a-f]{64};/)
    expect(setCookie).toContain('HttpOnly')
    const session = await (await h.web.request('/api/auth/session', { headers: { cookie: sessionCookie(res) } })).json()
    expect(session.user).toMatchObject({ id: body.user.id, email })
  })

  it('links a second sign-in to the same user: no duplicate, no second welcome, a new session', async () => {
    const [before] = await usersWithEmail(h, email)
    // The posted address in lower case, the message's checksummed: any case matches.
    const nonce = await getNonce(h, 'POST')
    const message = siweMessage(wallet.address, nonce)
    const res = await postWalletAuth(h, { address: wallet.address.toLowerCase(), message, signature: await wallet.signMessage({ message }), chain: 'base' })
    expect(res.status).toBe(200)
    expect((await res.json()).user.id).toBe(before.id)
    expect(await usersWithEmail(h, email)).toHaveLength(1)
    expect(await welcomeMails(h, email)).toHaveLength(1)
    expect(sessionCookie(res)).toMatch(/^service-session=/)
  })

  it('links to an existing user that already has the derived email (no welcome)', async () => {
    const other = privateKeyToAccount(generatePrivateKey())
    const seeded = await h.seedUser('Wally', walletEmail(other.address))
    const { res } = await signInBase(h, other)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, user: { id: seeded.id, name: 'Wally' } })
    expect(await welcomeMails(h, walletEmail(other.address))).toEqual([])
  })

  it('accepts the optional fields, a URI on another APP_ORIGIN and a small clock skew', async () => {
    const now = Date.now()
    const { res } = await signInBase(h, privateKeyToAccount(generatePrivateKey()), {
      scheme: 'http',
      uri: 'http://127.0.0.1:5173/sign-in',
      statement: 'Sign in to the platform.',
      issuedAt: new Date(now + 30_000),
      expirationTime: new Date(now + 5 * 60_000),
      notBefore: new Date(now - 60_000),
      requestId: 'req-1',
      resources: ['https://localhost:3000/terms'],
    })
    expect(res.status).toBe(200)
  })
})

describe('Base, smart wallets', () => {
  it('accepts an ERC-6492 signature of an account that is not deployed, and leaves it undeployed', async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const salt = pad('0x01')
    const account = await smart.addressOf(owner, salt)
    expect(await smart.client.getCode({ address: account })).toBeUndefined()

    const nonce = await getNonce(h)
    const message = siweMessage(account, nonce)
    const signature = await smart.sign6492(owner, salt, message)
    const res = await postWalletAuth(h, { address: account, message, signature })
    expect(res.status, await res.clone().text()).toBe(200)
    const body = await res.json()
    expect(body.user.name).toBe(account)
    expect((await usersWithEmail(h, walletEmail(account)))[0].id).toBe(body.user.id)
    expect(await smart.client.getCode({ address: account })).toBeUndefined()
  })

  it('accepts an ERC-1271 signature of a deployed account', async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const account = await smart.deploy(owner, pad('0x02'))
    expect(await smart.client.getCode({ address: account })).toMatch(/^0x[0-9a-f]{10,}/)

    const nonce = await getNonce(h)
    const message = siweMessage(account, nonce)
    const res = await postWalletAuth(h, { address: account, message, signature: await smart.signAsOwner(owner, message) })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(await usersWithEmail(h, walletEmail(account))).toHaveLength(1)
  })

  it('still accepts a 6492-wrapped signature once the account is deployed', async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const salt = pad('0x03')
    const account = await smart.deploy(owner, salt)
    const nonce = await getNonce(h)
    const message = siweMessage(account, nonce)
    const res = await postWalletAuth(h, { address: account, message, signature: await smart.sign6492(owner, salt, message) })
    expect(res.status).toBe(200)
  })
})

describe('Tempo (4217)', () => {
  it('signs in with a personal_sign message, and the same wallet is the same user on Base', async () => {
    const wallet = anvil.accounts[5]
    const { res } = await signInTempo(h, wallet)
    expect(res.status, await res.clone().text()).toBe(200)
    const body = await res.json()
    expect(body).toEqual({ ok: true, user: { id: expect.any(String), name: wallet.address } })
    expect(sessionCookie(res)).toMatch(/^service-session=[0-9a-f]{64}$/)
    expect(await welcomeMails(h, walletEmail(wallet.address))).toHaveLength(1)

    const again = await signInBase(h, wallet)
    expect((await again.res.json()).user.id).toBe(body.user.id)
  })

  it('the server-side builder writes exactly the documented format', () => {
    const m = { domain: 'localhost:3000', address: anvil.accounts[5].address, chainId: 4217, nonce: 'abc123abc123abc123', issuedAt: new Date() }
    expect(createTempoMessage(m)).toBe(tempoMessage(m.address, m.nonce, m))
    expect(parseTempoMessage(createTempoMessage(m))).toEqual(m)
  })

  it('accepts a lower-case address and an Issued At slightly ahead', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const nonce = await getNonce(h)
    const message = tempoMessage(wallet.address.toLowerCase(), nonce, { issuedAt: new Date(Date.now() + 20_000) })
    const res = await postSigned(h, wallet.address, message, wallet, { chain: 'tempo' })
    expect(res.status).toBe(200)
  })
})

describe('OpenAPI', () => {
  it('documents both nonce methods and the sign-in route with the Tempo format and the error codes', async () => {
    const doc = (await (await h.web.request('/api/openapi.json')).json()) as { paths: Record<string, Record<string, { description: string }>> }
    expect(Object.keys(doc.paths['/api/auth/nonce']).sort()).toEqual(['get', 'post'])
    const { description } = doc.paths['/api/wallet-auth'].post
    expect(description).toContain('<domain> wants you to sign in with your wallet.\n\nAddress: <0x address>\nChain ID: 4217\nNonce: <nonce>\nIssued At:')
    const codes = ['NONCE_INVALID', 'DOMAIN_MISMATCH', 'URI_MISMATCH', 'CHAIN_MISMATCH', 'ADDRESS_MISMATCH', 'MESSAGE_EXPIRED']
    codes.push('MESSAGE_NOT_YET_VALID', 'SIGNATURE_INVALID', 'MESSAGE_MALFORMED', 'CHAIN_UNAVAILABLE', 'ORIGIN_NOT_ALLOWED')
    for (const code of codes) expect(description).toContain(code)
  })
})
