import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MailProviderError, ResendMailer } from '../../lib/mail/resend'
import type { MailMessage } from '../../lib/context'
import { listen, type Loopback } from '../support/loopback'
import { startResendServer, type ResendServer } from './resend-server'

const KEY = 're_test_0123456789'
const SANDBOX = 're_sandbox_0123456789'
const OWNER = 'owner@example.com'
const FROM = 'Platform <no-reply@mail.example.com>'

const message: MailMessage = {
  to: 'alice@example.com',
  subject: 'Reset your password',
  text: 'Open http://localhost:3000/reset-password?token=secret-token-value',
  kind: 'password-reset',
}

let resend: ResendServer
beforeAll(async () => {
  resend = await startResendServer({ apiKey: KEY, sandboxKey: SANDBOX, ownerEmail: OWNER })
})
afterAll(() => resend.close())

const mailer = (over: Partial<ConstructorParameters<typeof ResendMailer>[0]> = {}) =>
  new ResendMailer({ apiKey: KEY, apiUrl: resend.url, from: FROM, ...over })

/** The rejection a send ends with. */
async function failure(p: Promise<void>) {
  const err = await p.then(
    () => expect.unreachable('send should have failed'),
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(MailProviderError)
  return err as MailProviderError
}

describe('ResendMailer against a Resend-compatible server', () => {
  it('POSTs {from, to: [to], subject, text} to /emails with the bearer key and a User-Agent', async () => {
    const before = resend.sent.length
    await mailer().send(message)
    expect(resend.sent).toHaveLength(before + 1)
    const got = resend.sent.at(-1)!
    expect(got).toMatchObject({ from: FROM, to: ['alice@example.com'], subject: 'Reset your password', text: message.text })
    expect(got.html).toBeUndefined()
    expect(got.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(got.headers['content-type']).toBe('application/json')
    expect(got.headers['user-agent']).toBe('agent-platform-backend/1.0') // ours, not the runtime's default
  })

  it('accepts an API URL with a trailing slash', async () => {
    const before = resend.sent.length
    await mailer({ apiUrl: `${resend.url}/` }).send(message)
    expect(resend.sent).toHaveLength(before + 1)
  })

  it('a wrong key: throws with the status and Resend\'s error name and message', async () => {
    const err = await failure(mailer({ apiKey: 're_wrong' }).send(message))
    expect(err.status).toBe(403)
    expect(err.message).toBe('Resend refused password-reset mail (403: invalid_api_key: API key is invalid.)')
  })

  it('a sandbox key sending to someone else: 403 validation_error, nothing sent', async () => {
    const before = resend.sent.length
    const err = await failure(mailer({ apiKey: SANDBOX }).send(message))
    expect(err.status).toBe(403)
    expect(err.message).toContain('validation_error')
    expect(resend.sent).toHaveLength(before)
    await mailer({ apiKey: SANDBOX }).send({ ...message, to: OWNER }) // its own address is fine
    expect(resend.sent.at(-1)!.to).toEqual([OWNER])
  })

  it('a malformed MAIL_FROM: 422 validation_error', async () => {
    const err = await failure(mailer({ from: 'not an address' }).send(message))
    expect(err.status).toBe(422)
    expect(err.message).toContain('validation_error: Invalid `from` field')
  })

  it('a wrong API URL: 404 not_found', async () => {
    const err = await failure(mailer({ apiUrl: `${resend.url}/v0` }).send(message))
    expect(err.status).toBe(404)
    expect(err.message).toContain('not_found')
  })

  it('an error never carries the message body (it may hold a reset link)', async () => {
    const err = await failure(mailer({ apiKey: 're_wrong' }).send(message))
    expect(err.message).not.toContain('secret-token-value')
    expect(err.message).not.toContain('alice@example.com')
  })
})

describe('ResendMailer when the provider misbehaves', () => {
  let odd: Loopback
  let oddUrl: string
  beforeAll(async () => {
    odd = await listen(
      createServer((req, res) => {
        if (req.url === '/hang/emails') return // never answers
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>')
      }),
    )
    oddUrl = odd.url
  })
  afterAll(() => odd.close())

  it('a non-JSON 5xx: throws with the status', async () => {
    const err = await failure(mailer({ apiUrl: oddUrl }).send(message))
    expect(err.status).toBe(502)
    expect(err.message).toBe('Resend refused password-reset mail (502: Bad Gateway)')
  })

  it('no answer: gives up after the timeout', async () => {
    await expect(mailer({ apiUrl: `${oddUrl}/hang`, timeoutMs: 200 }).send(message)).rejects.toMatchObject({ name: 'TimeoutError' })
  })

  it('nothing listening: rejects', async () => {
    await expect(mailer({ apiUrl: 'http://127.0.0.1:1' }).send(message)).rejects.toThrow()
  })
})
