import { describe, expect, it } from 'vitest'
import { hashTypedData, verifyTypedData } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { decodeVoucher, encodeVoucher, VOUCHER_DOMAIN, voucherSigner, voucherTypedData } from '../../lib/payments/voucher'

const wallet = privateKeyToAccount(generatePrivateKey())
const sessionId = '0f8fad5b-d9cb-469f-a165-70867728950e'
const sign = (v: { cumulativeAmount: bigint; nonce: bigint }, id = sessionId, by = wallet) => by.signTypedData(voucherTypedData(id, v))
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')

describe('voucher: the EIP-712 contract clients sign', () => {
  it('domain {name: Platform, version: 1, chainId: 8453}, no verifying contract; Voucher(string sessionId,uint256 cumulativeAmount,uint256 nonce)', () => {
    expect(VOUCHER_DOMAIN).toEqual({ name: 'Platform', version: '1', chainId: 8453 })
    const data = voucherTypedData(sessionId, { cumulativeAmount: 10_000n, nonce: 1n })
    expect(hashTypedData(data)).toBe(
      hashTypedData({
        domain: { name: 'Platform', version: '1', chainId: 8453 },
        types: { Voucher: [{ name: 'sessionId', type: 'string' }, { name: 'cumulativeAmount', type: 'uint256' }, { name: 'nonce', type: 'uint256' }] },
        primaryType: 'Voucher',
        message: { sessionId, cumulativeAmount: 10_000n, nonce: 1n },
      }),
    )
  })

  it('a signed voucher recovers to its signer, and verifies with viem as any client would check it', async () => {
    const v = { cumulativeAmount: 123_456n, nonce: 7n }
    const signature = await sign(v)
    expect(await voucherSigner(sessionId, { ...v, signature })).toBe(wallet.address)
    expect(await verifyTypedData({ ...voucherTypedData(sessionId, v), address: wallet.address, signature })).toBe(true)
  })

  it('the same signature read for another session, amount or nonce recovers to someone else', async () => {
    const v = { cumulativeAmount: 100n, nonce: 1n }
    const signature = await sign(v)
    for (const [id, changed] of [
      ['1e1b5c3a-0000-4000-8000-000000000000', v],
      [sessionId, { ...v, cumulativeAmount: 101n }],
      [sessionId, { ...v, nonce: 2n }],
    ] as const) {
      expect(await voucherSigner(id, { ...changed, signature })).not.toBe(wallet.address)
    }
  })

  it('an unrecoverable signature is null, not a throw', async () => {
    expect(await voucherSigner(sessionId, { cumulativeAmount: 1n, nonce: 1n, signature: `0x${'00'.repeat(65)}` })).toBeNull()
  })
})

describe('voucher: the X-Session-Voucher header', () => {
  it('round-trips base64url JSON with decimal-string amounts, up to uint256', async () => {
    const max = 2n ** 256n - 1n
    const v = { cumulativeAmount: max, nonce: max, signature: await sign({ cumulativeAmount: max, nonce: max }) }
    const header = encodeVoucher(v)
    expect(header).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ cumulativeAmount: max.toString(), nonce: max.toString(), signature: v.signature })
    expect(decodeVoucher(header)).toEqual(v)
  })

  it('takes safe JSON integers too', async () => {
    const signature = await sign({ cumulativeAmount: 5n, nonce: 1n })
    expect(decodeVoucher(b64({ cumulativeAmount: 5, nonce: 1, signature }))).toEqual({ cumulativeAmount: 5n, nonce: 1n, signature })
  })

  it('refuses anything else: null', async () => {
    const signature = await sign({ cumulativeAmount: 5n, nonce: 1n })
    const good = { cumulativeAmount: '5', nonce: '1', signature }
    for (const header of [
      undefined,
      '',
      '%%%',
      b64('not json'),
      b64('null'),
      b64('[1,2,3]'),
      b64({ ...good, cumulativeAmount: '-5' }),
      b64({ ...good, cumulativeAmount: '5.0' }),
      b64({ ...good, cumulativeAmount: '0x05' }),
      b64({ ...good, cumulativeAmount: 2 ** 53 }),
      b64({ ...good, cumulativeAmount: 1.5 }),
      b64({ ...good, nonce: (2n ** 256n).toString() }),
      b64({ ...good, nonce: undefined }),
      b64({ ...good, signature: signature.slice(0, -2) }),
      b64({ ...good, signature: `${signature.slice(0, -2)}zz` }),
      b64({ ...good, signature: 12 }),
      b64({ ...good, pad: 'x'.repeat(1200) }),
    ]) {
      expect(decodeVoucher(header), String(header)).toBeNull()
    }
  })
})
