import { beforeAll, describe, expect, it } from 'vitest'
import { pad } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startAnvil } from '../../support/anvil'
import { useFixture, useHarness } from '../../support/harness'
import {
  expectRefused,
  getNonce,
  inFreshWindow,
  postSigned,
  postWalletAuth,
  signInBase,
  signInTempo,
  siweMessage,
  tempoMessage,
  walletUserCount,
} from './flow'
import { smartAccounts } from './smart-accounts'
import { FORBIDDEN_ORIGIN } from '../../support/requests'

let smart: Awaited<ReturnType<typeof smartAccounts>>
const anvil = useFixture(() => startAnvil({ chainId: 8453 }))
const h = useHarness(() => ({ env: { BASE_RPC_URL: anvil.url } }))
beforeAll(async () => {
  smart = await smartAccounts(anvil)
})

const wallet = privateKeyToAccount(generatePrivateKey())
const attacker = privateKeyToAccount(generatePrivateKey())

describe('nonces are single use', () => {
  it('a replayed sign-in (same message and signature) is refused', async () => {
    const { res, body } = await signInBase(h, wallet)
    expect(res.status).toBe(200)
    await expectRefused(await postWalletAuth(h, body), 401, 'NONCE_INVALID')
  })

  it('two concurrent uses of one nonce: exactly one signs in', async () => {
    const nonce = await getNonce(h)
    const message = siweMessage(wallet.address, nonce)
    const body = { address: wallet.address, message, signature: await wallet.signMessage({ message }) }
    const statuses = (await Promise.all([postWalletAuth(h, body), postWalletAuth(h, body), postWalletAuth(h, body)])).map((r) => r.status)
    expect(statuses.sort()).toEqual([200, 401, 401])
  })

  it('a failed attempt spends the nonce: the genuine signature cannot follow it', async () => {
    const nonce = await getNonce(h)
    const message = siweMessage(wallet.address, nonce)
    await expectRefused(await postSigned(h, wallet.address, message, attacker), 401, 'SIGNATURE_INVALID')
    await expectRefused(await postSigned(h, wallet.address, message, wallet), 401, 'NONCE_INVALID')
  })

  it('a mismatched message spends the nonce too (no retry with a corrected message)', async () => {
    const nonce = await getNonce(h)
    const wrong = siweMessage(wallet.address, nonce, { chainId: 1 })
    await expectRefused(await postSigned(h, wallet.address, wrong, wallet), 401, 'CHAIN_MISMATCH')
    const right = siweMessage(wallet.address, nonce)
    await expectRefused(await postSigned(h, wallet.address, right, wallet), 401, 'NONCE_INVALID')
  })

  it('a nonce spent on Tempo is spent for Base', async () => {
    const { res, nonce } = await signInTempo(h, wallet)
    expect(res.status).toBe(200)
    const message = siweMessage(wallet.address, nonce)
    await expectRefused(await postSigned(h, wallet.address, message, wallet), 401, 'NONCE_INVALID')
  })

  it('a nonce is not the kv key itself: a near-miss or lookalike is unknown', async () => {
    const nonce = await getNonce(h)
    for (const guess of [nonce.toUpperCase(), nonce.slice(0, -1), `${nonce}0`]) {
      const message = siweMessage(wallet.address, guess)
      await expectRefused(await postSigned(h, wallet.address, message, wallet), 401, 'NONCE_INVALID')
    }
  })
})

describe('signatures bind the whole message', () => {
  it('a signature of one message does not carry over to another (other nonce)', async () => {
    const first = siweMessage(wallet.address, await getNonce(h))
    const signature = await wallet.signMessage({ message: first })
    const second = siweMessage(wallet.address, await getNonce(h))
    await expectRefused(await postWalletAuth(h, { address: wallet.address, message: second, signature }), 401, 'SIGNATURE_INVALID')
  })

  it('a Tempo signature does not sign in on Base and vice versa', async () => {
    const nonce = await getNonce(h)
    const siwe = siweMessage(wallet.address, nonce)
    const signedTempo = await wallet.signMessage({ message: tempoMessage(wallet.address, nonce) })
    await expectRefused(await postWalletAuth(h, { address: wallet.address, message: siwe, signature: signedTempo }), 401, 'SIGNATURE_INVALID')

    const nonce2 = await getNonce(h)
    const tempo = tempoMessage(wallet.address, nonce2)
    const signedSiwe = await wallet.signMessage({ message: siweMessage(wallet.address, nonce2) })
    await expectRefused(await postWalletAuth(h, { address: wallet.address, message: tempo, signature: signedSiwe, chain: 'tempo' }), 401, 'SIGNATURE_INVALID')
  })

  it("an attacker's message naming the victim's address is refused", async () => {
    const { res } = await signInBase(h, attacker, {})
    expect(res.status).toBe(200) // the attacker may sign in as themself
    const nonce = await getNonce(h)
    const message = siweMessage(wallet.address, nonce)
    await expectRefused(await postSigned(h, wallet.address, message, attacker), 401, 'SIGNATURE_INVALID')
  })
})

describe('smart wallets', () => {
  it('an ERC-6492 signature by someone other than the owner is refused', async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const salt = pad('0x10')
    const account = await smart.addressOf(owner, salt)
    const message = siweMessage(account, await getNonce(h))
    const signature = await smart.sign6492(owner, salt, message, attacker)
    await expectRefused(await postWalletAuth(h, { address: account, message, signature }), 401, 'SIGNATURE_INVALID')
  })

  it("an ERC-6492 wrapper deploying the attacker's account cannot sign for another counterfactual address", async () => {
    const victim = privateKeyToAccount(generatePrivateKey())
    const victimAccount = await smart.addressOf(victim, pad('0x11'))
    const message = siweMessage(victimAccount, await getNonce(h))
    // A genuine wrapper, but for the attacker's own account: the deployed code is not at the claimed address.
    const signature = await smart.sign6492(attacker, pad('0x11'), message)
    await expectRefused(await postWalletAuth(h, { address: victimAccount, message, signature }), 401, 'SIGNATURE_INVALID')
    expect(await smart.client.getCode({ address: victimAccount })).toBeUndefined()
  })

  it('a deployed ERC-1271 account refuses a signature by another key', async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const account = await smart.deploy(owner, pad('0x12'))
    const message = siweMessage(account, await getNonce(h))
    await expectRefused(await postWalletAuth(h, { address: account, message, signature: await smart.signAsOwner(attacker, message) }), 401, 'SIGNATURE_INVALID')
  })
})

describe('origin and rate limits', () => {
  it('refuses a browser POST from a foreign origin before reading the body; the nonce survives', async () => {
    const nonce = await getNonce(h)
    const message = siweMessage(wallet.address, nonce)
    const body = { address: wallet.address, message, signature: await wallet.signMessage({ message }) }
    const res = await postWalletAuth(h, body, { origin: 'https://evil.example' })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual(FORBIDDEN_ORIGIN)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect((await postWalletAuth(h, body)).status).toBe(200)
  })

  it('limits nonces to 30 per minute per IP', async () => {
    const ip = '198.19.1.1'
    await inFreshWindow(60)
    for (let i = 0; i < 30; i++) await getNonce(h, i % 2 ? 'POST' : 'GET', ip)
    const res = await h.web.request('/api/auth/nonce', { headers: { 'cf-connecting-ip': ip } })
    expect(res.status).toBe(429)
    expect(await res.json()).toEqual({ error: 'Too many requests', code: 'RATE_LIMITED' })
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await h.web.request('/api/auth/nonce', { headers: { 'cf-connecting-ip': '198.19.1.2' } })).status).toBe(200)
  })

  it('limits sign-in attempts to 10 per minute per IP; malformed bodies are refused without counting', async () => {
    const ip = '198.19.2.1'
    await inFreshWindow(60)
    for (let i = 0; i < 3; i++) expect((await postWalletAuth(h, {}, { 'cf-connecting-ip': ip })).status).toBe(400)
    const message = siweMessage(wallet.address, 'f'.repeat(32))
    const attempt = { address: wallet.address, message, signature: await wallet.signMessage({ message }) }
    for (let i = 0; i < 10; i++) await expectRefused(await postWalletAuth(h, attempt, { 'cf-connecting-ip': ip }), 401, 'NONCE_INVALID')
    const limited = await postWalletAuth(h, attempt, { 'cf-connecting-ip': ip })
    expect(limited.status).toBe(429)
    expect(await limited.json()).toEqual({ error: 'Too many sign-in attempts. Try again later.', code: 'RATE_LIMITED' })
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
    // A limited attempt does not touch the nonce: it still works from elsewhere.
    const fresh = siweMessage(wallet.address, await getNonce(h))
    const body = { address: wallet.address, message: fresh, signature: await wallet.signMessage({ message: fresh }) }
    expect((await postWalletAuth(h, body, { 'cf-connecting-ip': ip })).status).toBe(429)
    expect((await postWalletAuth(h, body)).status).toBe(200)
  })
})

it('only the wallet and the attacker signed in as themselves: one user each', async () => {
  expect(await walletUserCount(h)).toBe(2)
})
