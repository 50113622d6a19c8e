import { describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startAnvil } from '../../support/anvil'
import { BROWSER, useFixture, useHarness } from '../../support/harness'
import {
  expectRefused,
  getNonce,
  postSigned,
  postWalletAuth,
  signInBase,
  signInTempo,
  siweMessage,
  tempoMessage,
  walletUserCount,
} from './flow'

const anvil = useFixture(() => startAnvil({ chainId: 8453 }))
const h = useHarness(() => ({ env: { BASE_RPC_URL: anvil.url } }))

const wallet = privateKeyToAccount(generatePrivateKey())
const other = privateKeyToAccount(generatePrivateKey())
const MIN = 60_000

describe('request validation: 400 VALIDATION', () => {
  const good = { address: wallet.address, message: 'x', signature: '0x1234' }
  const cases: Array<[string, unknown, string]> = [
    ['empty body', {}, 'Address required'],
    ['short address', { ...good, address: '0x1234' }, 'Invalid address'],
    ['address without 0x', { ...good, address: wallet.address.slice(2) }, 'Invalid address'],
    ['missing message', { ...good, message: undefined }, 'Message required'],
    ['empty message', { ...good, message: '' }, 'Message required'],
    ['oversized message', { ...good, message: 'a'.repeat(8193) }, 'Message too long'],
    ['missing signature', { ...good, signature: undefined }, 'Signature required'],
    ['non-hex signature', { ...good, signature: 'not-a-signature' }, 'Invalid signature'],
    ['odd-length signature', { ...good, signature: '0x123' }, 'Invalid signature'],
    ['unknown chain', { ...good, chain: 'ethereum' }, "Chain must be 'base' or 'tempo'"],
    ['chain id instead of name', { ...good, chain: 8453 }, "Chain must be 'base' or 'tempo'"],
  ]
  for (const [name, body, error] of cases) {
    it(name, async () => {
      const res = await postWalletAuth(h, body)
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ error, code: 'VALIDATION' })
    })
  }

  it('refuses a body that is not JSON', async () => {
    const res = await h.web.request('/api/wallet-auth', { method: 'POST', headers: { 'content-type': 'application/json', ...BROWSER }, body: '{' })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'Invalid JSON body', code: 'INVALID_JSON' })
  })
})

describe('Base (SIWE): refused messages', () => {
  const refused: Array<[string, Parameters<typeof signInBase>[2], number, string]> = [
    ['wrong domain', { domain: 'evil.example' }, 401, 'DOMAIN_MISMATCH'],
    ['domain without the port', { domain: 'localhost' }, 401, 'DOMAIN_MISMATCH'],
    ['wrong scheme', { scheme: 'https' }, 401, 'DOMAIN_MISMATCH'],
    ['wrong URI', { uri: 'https://evil.example/login' }, 401, 'URI_MISMATCH'],
    ['URI on a look-alike origin', { uri: 'http://localhost:3000.evil.example/' }, 401, 'URI_MISMATCH'],
    ['wrong chain id (1)', { chainId: 1 }, 401, 'CHAIN_MISMATCH'],
    ['Tempo chain id on Base', { chainId: 4217 }, 401, 'CHAIN_MISMATCH'],
    ['expired', { expirationTime: new Date(Date.now() - MIN) }, 401, 'MESSAGE_EXPIRED'],
    ['not before in the future', { notBefore: new Date(Date.now() + 60 * MIN) }, 401, 'MESSAGE_NOT_YET_VALID'],
    ['issued far in the future', { issuedAt: new Date(Date.now() + 60 * MIN) }, 401, 'MESSAGE_NOT_YET_VALID'],
  ]
  for (const [name, over, status, code] of refused) {
    it(name, async () => {
      const { res } = await signInBase(h, wallet, over)
      await expectRefused(res, status, code)
    })
  }

  it('an unknown nonce', async () => {
    const message = siweMessage(wallet.address, 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6')
    const res = await postSigned(h, wallet.address, message, wallet)
    expect(await expectRefused(res, 401, 'NONCE_INVALID')).toEqual({ error: 'Invalid or expired nonce', code: 'NONCE_INVALID' })
  })

  it('a signature by another key', async () => {
    const nonce = await getNonce(h)
    const message = siweMessage(wallet.address, nonce)
    const res = await postSigned(h, wallet.address, message, other)
    expect(await expectRefused(res, 401, 'SIGNATURE_INVALID')).toEqual({ error: 'Invalid signature', code: 'SIGNATURE_INVALID' })
  })

  it('a posted address other than the message’s', async () => {
    const nonce = await getNonce(h)
    const message = siweMessage(wallet.address, nonce)
    const res = await postSigned(h, other.address, message, wallet)
    await expectRefused(res, 401, 'ADDRESS_MISMATCH')
  })

  it('malformed signatures: too short, 65 bytes of noise, garbage of signature length', async () => {
    for (const signature of ['0x1234', `0x${'ab'.repeat(65)}`, `0x${'00'.repeat(65)}`, `0x${'ff'.repeat(300)}`]) {
      const nonce = await getNonce(h)
      const message = siweMessage(wallet.address, nonce)
      await expectRefused(await postWalletAuth(h, { address: wallet.address, message, signature }), 401, 'SIGNATURE_INVALID')
    }
  })

  it('a message that is not EIP-4361, or lacks a required line: 400 MESSAGE_MALFORMED', async () => {
    const nonce = await getNonce(h)
    const full = siweMessage(wallet.address, nonce)
    for (const message of ['hello', full.replace(/\nIssued At: .*/, ''), full.replace('Version: 1', 'Version: 2'), tempoMessage(wallet.address, nonce)]) {
      const res = await postSigned(h, wallet.address, message, wallet)
      expect(await expectRefused(res, 400, 'MESSAGE_MALFORMED')).toEqual({ error: 'Malformed sign-in message', code: 'MESSAGE_MALFORMED' })
    }
  })
})

describe('Tempo: refused messages', () => {
  it('wrong chain id', async () => {
    await expectRefused((await signInTempo(h, wallet, { chainId: 8453 })).res, 401, 'CHAIN_MISMATCH')
  })

  it('wrong domain', async () => {
    await expectRefused((await signInTempo(h, wallet, { domain: 'evil.example' })).res, 401, 'DOMAIN_MISMATCH')
  })

  it('stale Issued At (over 10 minutes old)', async () => {
    await expectRefused((await signInTempo(h, wallet, { issuedAt: new Date(Date.now() - 11 * MIN) })).res, 401, 'MESSAGE_EXPIRED')
  })

  it('Issued At in the future', async () => {
    await expectRefused((await signInTempo(h, wallet, { issuedAt: new Date(Date.now() + 5 * MIN) })).res, 401, 'MESSAGE_NOT_YET_VALID')
  })

  it('a signature by another key', async () => {
    const nonce = await getNonce(h)
    const message = tempoMessage(wallet.address, nonce)
    const res = await postSigned(h, wallet.address, message, other, { chain: 'tempo' })
    await expectRefused(res, 401, 'SIGNATURE_INVALID')
  })

  it('a malformed signature', async () => {
    const nonce = await getNonce(h)
    const res = await postWalletAuth(h, { address: wallet.address, message: tempoMessage(wallet.address, nonce), signature: '0xdead', chain: 'tempo' })
    await expectRefused(res, 401, 'SIGNATURE_INVALID')
  })

  it('not exactly the format: missing nonce line, extra or trailing lines, SIWE, other wording, non-UTC time', async () => {
    const nonce = await getNonce(h)
    const good = tempoMessage(wallet.address, nonce)
    const variants = [
      good.replace(`\nNonce: ${nonce}`, ''),
      `${good}\n`,
      `${good}\nResources: x`,
      `Hello\n${good}`,
      good.replace('wallet.', 'Ethereum account:'),
      good.replace(/Z$/, '+00:00'),
      good.replace('\n\n', '\n'),
      siweMessage(wallet.address, nonce, { chainId: 4217 }),
    ]
    for (const message of variants) {
      const res = await postSigned(h, wallet.address, message, wallet, { chain: 'tempo' })
      await expectRefused(res, 400, 'MESSAGE_MALFORMED')
    }
  })
})

it('no refused attempt created a user', async () => {
  expect(await walletUserCount(h)).toBe(0)
})
