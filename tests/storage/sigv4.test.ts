import { describe, expect, it } from 'vitest'
import { EMPTY_SHA256, payloadHash as hashOf, signS3Request, uriEncode } from '../../functions/files/storage/sigv4'

/**
 * The worked examples of the S3 documentation ("Signature Calculations for the Authorization Header: Transferring
 * Payload in a Single Chunk"): same keys, same instant, the signatures AWS publishes. s3rver does not check V4
 * signatures, so these are what proves the signer.
 */
const keys = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1' }
const now = new Date('2013-05-24T00:00:00Z')
const host = 'https://examplebucket.s3.amazonaws.com'
const credential = 'Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request'

describe('SigV4 for S3: the documented examples', () => {
  it('GET Object with a Range header', async () => {
    const h = await signS3Request(keys, { method: 'GET', url: new URL(`${host}/test.txt`), headers: { Range: 'bytes=0-9' }, payloadHash: EMPTY_SHA256, now })
    expect(h.authorization).toBe(
      `AWS4-HMAC-SHA256 ${credential}, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41`,
    )
    expect(h['x-amz-date']).toBe('20130524T000000Z')
    expect(h['x-amz-content-sha256']).toBe(EMPTY_SHA256)
  })

  it('PUT Object with a payload, a Date and a storage class (a key with `$`, percent-encoded)', async () => {
    const payloadHash = await hashOf(new TextEncoder().encode('Welcome to Amazon S3.'))
    expect(payloadHash).toBe('44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072')
    const url = new URL(`${host}/${uriEncode('test$file.text', true)}`)
    const h = await signS3Request(keys, {
      method: 'PUT',
      url,
      headers: { Date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
      payloadHash,
      now,
    })
    expect(h.authorization).toBe(
      `AWS4-HMAC-SHA256 ${credential}, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd`,
    )
  })

  it('GET Bucket lifecycle (a sub-resource with no value)', async () => {
    const h = await signS3Request(keys, { method: 'GET', url: new URL(`${host}/?lifecycle`), payloadHash: EMPTY_SHA256, now })
    expect(h.authorization).toContain('Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543')
  })

  it('GET Bucket (list objects) with query parameters, sorted', async () => {
    const h = await signS3Request(keys, { method: 'GET', url: new URL(`${host}/?prefix=J&max-keys=2`), payloadHash: EMPTY_SHA256, now })
    expect(h.authorization).toContain('Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7')
  })

  it('encodes everything but unreserved characters (and `/` in paths), byte by byte in UTF-8', () => {
    expect(uriEncode('a b+c/d~e_f.g-h', true)).toBe('a%20b%2Bc/d~e_f.g-h')
    expect(uriEncode('a/b')).toBe('a%2Fb')
    expect(uriEncode('é')).toBe('%C3%A9')
  })
})
