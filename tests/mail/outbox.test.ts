import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { openPglite, type PgliteDatabase } from '../../infra/database'
import type { Db } from '../../lib/db/rls'
import type { Context } from 'hono'
import { parseConfig } from '../../lib/config'
import type { AppEnv } from '../../lib/context'
import { withUser } from '../../lib/db/rls'
import { mailerFor } from '../../lib/mail'
import { OutboxMailer } from '../../lib/mail/outbox'
import { ResendMailer } from '../../lib/mail/resend'
import { managedServices } from '../../lib/services/managed'
import { mailOutbox, users } from '../../schema'
import { pgliteServiceView, pgliteTemplate } from '../support/stores'

const LINK = 'http://localhost:3000/reset-password?token=abc123secret'
const message = { to: 'alice@example.com', subject: 'Reset your password', text: `Hello.\n\nOpen:\n${LINK}\n`, kind: 'password-reset' }

// `database.db` is the app's connection (app_api: the mailer must go through asService); `seen` sees all.
let database: PgliteDatabase
let seen: Db
beforeAll(async () => {
  database = await openPglite(undefined, { loadDataDir: pgliteTemplate() })
  seen = pgliteServiceView(database.client)
})
afterAll(() => database.close())
afterEach(() => {
  vi.restoreAllMocks()
})

describe('OutboxMailer', () => {
  it('stores the message in mail_outbox and logs one line with the body outside production', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {})
    await new OutboxMailer(() => database.db, { logBody: true }).send(message)
    const rows = await seen.select().from(mailOutbox)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ to: message.to, subject: message.subject, text: message.text, kind: 'password-reset' })
    expect(info).toHaveBeenCalledTimes(1)
    const line = String(info.mock.calls[0][0])
    expect(line).not.toContain('\n')
    expect(JSON.parse(line)).toMatchObject({ event: 'mail.outbox', kind: 'password-reset', id: rows[0].id, to: 'alice@example.com', subject: 'Reset your password', text: message.text })
  })

  it('in production logs neither the body (the link) nor the address, and still stores the message', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {})
    await new OutboxMailer(() => database.db, { logBody: false }).send({ ...message, to: 'bob@example.com' })
    const line = String(info.mock.calls[0][0])
    expect(Object.keys(JSON.parse(line)).sort()).toEqual(['event', 'id', 'kind', 'level', 'time'])
    expect(line).not.toContain('abc123secret')
    expect(line).not.toContain('bob@example.com')
    expect((await seen.select().from(mailOutbox)).map((r) => r.to)).toContain('bob@example.com')
  })

  it('signed-in users cannot read the outbox (no privilege, and RLS with no policy)', async () => {
    vi.spyOn(console, 'info').mockImplementation(() => {})
    const [u] = await seen.insert(users).values({ email: 'carol@example.com', name: 'Carol' }).returning()
    await new OutboxMailer(() => database.db, { logBody: true }).send({ ...message, to: u.email })
    await expect(withUser(database.db, u.id, (tx) => tx.select().from(mailOutbox))).rejects.toMatchObject({ cause: { code: '42501' } })
  })
})

describe('choosing the mailer', () => {
  const fakeContext = (env: Record<string, string>) => ({ env }) as unknown as Context<AppEnv>

  it('mailerFor: Resend with RESEND_API_KEY, else the outbox', () => {
    const db = () => database.db
    expect(mailerFor(parseConfig({ RESEND_API_KEY: 're_x' }), db)).toBeInstanceOf(ResendMailer)
    expect(mailerFor(parseConfig({}), db)).toBeInstanceOf(OutboxMailer)
  })

  it('managed services: Resend needs no database; the outbox opens it only when sending', async () => {
    // No db store: touching the database would answer 503.
    const withKey = managedServices({})(fakeContext({ RESEND_API_KEY: 're_x' }))
    expect(withKey.mail).toBeInstanceOf(ResendMailer)
    expect(withKey.mail).toBe(withKey.mail) // made once per request

    const withoutKey = managedServices({})(fakeContext({}))
    expect(withoutKey.mail).toBeInstanceOf(OutboxMailer) // building it touched nothing
    await expect(withoutKey.mail.send(message)).rejects.toThrow('Database not configured')

    let opened = 0
    const withDb = managedServices({ db: () => (opened++, { db: database.db, close: async () => {} }) })(fakeContext({ NODE_ENV: 'production' }))
    const info = vi.spyOn(console, 'info').mockImplementation(() => {})
    expect(opened).toBe(0)
    await withDb.mail.send({ ...message, to: 'dave@example.com' })
    expect(opened).toBe(1)
    expect(String(info.mock.calls[0][0])).not.toContain('abc123secret') // NODE_ENV=production: no body
  })
})
