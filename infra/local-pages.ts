// The local server's pages for a developer without a mail provider: the mail inbox, and the two pages its links
// lead to. Never on Workers, never with a mail provider, never with NODE_ENV=production (README "Local mail").
import { desc, eq } from 'drizzle-orm'
import type { Hono } from 'hono'
import { html, raw } from 'hono/html'
import type { Config } from '../lib/config'
import type { Db } from '../lib/db/rls'
import { asService } from '../lib/db/rls'
import { mailOutbox } from '../schema'

/** How many mails the inbox shows, newest first. */
export const INBOX_SIZE = 50

/** Where the inbox is on the web listener: a page for people, JSON for scripts (`?to=` narrows to one address). */
export const INBOX_PATH = '/dev/mail'
export const INBOX_JSON_PATH = '/dev/mail.json'

/** Whether this configuration gets the local pages: mail stays on this machine and nothing runs as production. */
export const localPagesEnabled = (config: Config) => !config.RESEND_API_KEY && config.NODE_ENV !== 'production'

export interface InboxMail {
  id: string
  to: string
  subject: string
  kind: string
  text: string
  /** Every http(s) link in the text, in order. */
  links: string[]
  createdAt: string
}

const LINK_RE = /https?:\/\/[^\s<>"')]+/g

/** The newest mails of the dev outbox, for `to` only when given. */
export async function readInbox(db: Db, to?: string): Promise<InboxMail[]> {
  const rows = await asService(db, 'localInbox', (tx) => {
    const q = tx.select().from(mailOutbox)
    return (to ? q.where(eq(mailOutbox.to, to.trim().toLowerCase())) : q).orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id)).limit(INBOX_SIZE)
  })
  return rows.map((r) => ({
    id: r.id,
    to: r.to,
    subject: r.subject,
    kind: r.kind,
    text: r.text,
    links: r.text.match(LINK_RE) ?? [],
    createdAt: r.createdAt.toISOString(),
  }))
}

const page = (title: string, body: unknown) => html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <style>
      body { font: 15px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f }
      article { border: 1px solid #ddd; border-radius: 8px; padding: .75rem 1rem; margin: 1rem 0 }
      pre { white-space: pre-wrap; word-break: break-all; background: #f6f6f6; padding: .5rem; border-radius: 4px }
      small { color: #666 } code { background: #f0f0f0; padding: 0 .2rem } output { display: block; margin-top: .5rem }
    </style>
  </head>
  <body>
    ${body}
  </body>
</html>`

/**
 * A page that completes the action of a mailed link by calling the API from this origin: its script sends the
 * token from the address bar, with this browser's session cookie when there is one.
 */
function actionPage(o: { title: string; intro: unknown; form: unknown; endpoint: string; bodyScript: string }) {
  return page(
    o.title,
    html`<h1>${o.title}</h1>
      <p>${o.intro}</p>
      <form id="action">${o.form}<button type="submit">${o.title}</button></form>
      <output id="result"></output>
      <p><small>Local development page of the API server (no dashboard runs here). <a href="${INBOX_PATH}">Mail inbox</a></small></p>
      <script>
        const token = new URLSearchParams(location.search).get('token') || ''
        document.getElementById('action').addEventListener('submit', async (event) => {
          event.preventDefault()
          const form = new FormData(event.target)
          const res = await fetch(${raw(JSON.stringify(o.endpoint))}, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            credentials: 'same-origin',
            body: JSON.stringify(${raw(o.bodyScript)}),
          })
          const answer = await res.json().catch(() => ({}))
          document.getElementById('result').textContent = res.ok ? 'Done.' : 'Refused: ' + (answer.error || res.status) + (answer.code ? ' (' + answer.code + ')' : '')
        })
      </script>`,
  )
}

/** Registers the inbox and the link pages on the local web app (after its routes: they never shadow one). */
export function serveLocalPages(web: Hono<any>, opts: { db: () => Db; config: Config }) {
  if (!localPagesEnabled(opts.config)) return false
  const noStore = { 'cache-control': 'no-store' }

  web.get(INBOX_JSON_PATH, async (c) => c.json({ mails: await readInbox(opts.db(), c.req.query('to')) }, 200, noStore))

  web.get(INBOX_PATH, async (c) => {
    const mails = await readInbox(opts.db(), c.req.query('to'))
    const list = mails.length
      ? mails.map(
          (m) => html`<article>
            <strong>${m.subject}</strong><br />
            <small>to ${m.to} · ${m.kind} · ${m.createdAt}</small>
            <pre>${m.text}</pre>
            ${m.links.map((l) => html`<a href="${l}">${l}</a><br />`)}
          </article>`,
        )
      : html`<p>No mail yet. Sign up (<code>POST /api/register</code>) and the verification mail appears here.</p>`
    return c.html(
      page(
        'Local mail',
        html`<h1>Local mail</h1>
          <p>
            Mail this server would have sent, newest first (${mails.length} shown, at most ${INBOX_SIZE}). No mail provider is
            configured, so nothing left this machine. As JSON for scripts: <a href="${INBOX_JSON_PATH}">${INBOX_JSON_PATH}</a>
            (<code>?to=</code> an address).
          </p>
          ${list}`,
      ),
      200,
      noStore,
    )
  })

  web.get('/verify-email', (c) =>
    c.html(
      actionPage({
        title: 'Confirm email',
        intro: html`Confirms the address this link was mailed to. Opened in the browser that signed up (with its session),
          you stay signed in and the password keeps working; opened anywhere else, every session, API key and passkey of the
          account ends and the password stops working (someone else may have set it): set a new one with
          <code>POST /api/auth/forgot-password</code>.`,
        form: '',
        endpoint: '/api/auth/verify-email',
        bodyScript: '{ token }',
      }),
      200,
      noStore,
    ),
  )

  web.get('/reset-password', (c) =>
    c.html(
      actionPage({
        title: 'Set password',
        intro: 'Sets a new password for the account this link was mailed to (8 to 256 characters).',
        form: html`<label>New password <input name="password" type="password" minlength="8" maxlength="256" required autocomplete="new-password" /></label> `,
        endpoint: '/api/auth/reset-password',
        bodyScript: "{ token, password: form.get('password') }",
      }),
      200,
      noStore,
    ),
  )
  return true
}
