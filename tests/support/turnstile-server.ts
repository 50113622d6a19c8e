import { createServer } from 'node:http'
import { listen } from './loopback'

/**
 * A stand-in for Cloudflare Turnstile's siteverify (a third-party API with no local peer): form-encoded
 * `secret`, `response`, `remoteip` in; `{success, "error-codes"}` out, as Cloudflare documents.
 */
export async function startTurnstileServer(opts: { secret: string; validTokens: string[] }) {
  const received: Array<Record<string, string>> = []
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(raw))
      received.push(form)
      const errors: string[] = []
      if (form.secret !== opts.secret) errors.push('invalid-input-secret')
      if (!opts.validTokens.includes(form.response)) errors.push('invalid-input-response')
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ success: errors.length === 0, 'error-codes': errors }))
    })
  })
  const { url, close } = await listen(server)
  return { url: `${url}/siteverify`, received, close }
}
