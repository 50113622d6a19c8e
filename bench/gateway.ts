// The gateway's own cost (issue #28): `POST /api/v1/gateway` through the local server's web app in front of a
// loopback plugin upstream, against the same upstream called directly, in the same run. Per payment method (a free
// plugin, card-paid from a plan's allowance, a payment session, MPP on a local chain): p50/p99 one call at a time,
// and calls per second under 16 concurrent callers, each with its ratio to the direct call. MPP and sessions need
// anvil (@foundry-rs/anvil); without it they are skipped. Prints figures; asserts nothing.
// `npx tsx bench/gateway.ts` alone, or part of `npm run bench`.
import { getRequestListener } from '@hono/node-server'
import { eq } from 'drizzle-orm'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseUnits, type LocalAccount } from 'viem'
import { createWebApp } from '../functions/web'
import { createNodeServices } from '../infra/services'
import { hashSessionToken, newSessionToken, SESSION_COOKIE, SESSION_TTL_MS } from '../lib/auth/session'
import { asService } from '../lib/db/rls'
import { sessions, users } from '../schema'
import { credential, challengeOf } from '../tests/families/gateway/helpers'
import { anvilAvailable } from '../tests/support/anvil'
import { listen } from '../tests/support/loopback'
import { mppMemo, mppSecret, startPaymentChain, type PaymentChain } from '../tests/support/payment-chain'
import { PaymentSessionClient, sessionHeaders, signVoucher } from '../tests/support/payment-session'

/** Calls timed one at a time (p50, p99), and per concurrent caller (calls per second), per method. */
const SEQUENTIAL = Number(process.env.BENCH_GATEWAY_CALLS ?? 300)
const CALLERS = 16
const PER_CALLER = Number(process.env.BENCH_GATEWAY_PER_CALLER ?? 60)
/** MPP pays each call on chain before it is made: fewer of them. */
const MPP_SEQUENTIAL = 60
const MPP_PER_CALLER = 8

const PAID = 'tts' // a paid plugin that does not stream
const FREE = 'stt'
const PAYLOAD = JSON.stringify({ input: 'hello', voice: 'alloy' })

type Call = () => Promise<void>
interface Figures {
  p50: number
  p99: number
  rps: number
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

/** `make(i)` builds the i-th call (its own headers: a fresh address, a voucher, a credential); each must answer 2xx. */
async function measure(make: (i: number) => Call, sequential: number, perCaller: number): Promise<Figures> {
  const times: number[] = []
  for (let i = 0; i < sequential; i++) {
    const call = make(i)
    const t = performance.now()
    await call()
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  const calls = Array.from({ length: CALLERS * perCaller }, (_, i) => make(sequential + i))
  const t = performance.now()
  await Promise.all(Array.from({ length: CALLERS }, async (_, k) => {
    for (let i = 0; i < perCaller; i++) await calls[k * perCaller + i]()
  }))
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), rps: calls.length / ((performance.now() - t) / 1000) }
}

async function ok(res: Response) {
  const body = await res.text()
  if (res.status >= 300) throw new Error(`${res.status} ${body.slice(0, 300)}`)
}

/** A loopback plugin upstream: JSON echoing what it received (the gateway tests' `json` behaviour). */
async function startUpstream() {
  const server = createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (raw += c))
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ plugin: (req.url ?? '/').slice(1), received: JSON.parse(raw || 'null') }))
    })
  })
  return listen(server)
}

export async function gatewayCosts() {
  const upstream = await startUpstream()
  const chain: PaymentChain | null = anvilAvailable ? await startPaymentChain() : null
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-gateway-'))
  const plugins = { [FREE]: { url: `${upstream.url}/${FREE}`, price: '0' }, [PAID]: { url: `${upstream.url}/${PAID}` } }
  const env = {
    LOG_REQUESTS: '0',
    ...process.env,
    DATA_DIR: dataDir,
    APP_VERSION: 'v0.0.0-bench',
    // Each call from its own client address (X-Forwarded-For from loopback): the per-address rate limit is checked
    // on every call, as in production, without 100 calls a minute refusing the rest.
    TRUST_PROXY: 'loopback',
    GATEWAY_PLUGINS: JSON.stringify(plugins),
    SESSION_SECRET: randomBytes(32).toString('hex'),
    ...chain?.env,
  }
  const node = await createNodeServices({ env })
  const web = createWebApp(node.provider)
  const server = await listen(createServerFor(web.fetch))
  const { db } = node.services

  // The log line each call writes is still formatted; only its write to this terminal is dropped.
  const info = console.info
  console.info = () => {}

  let ip = 0
  const address = () => {
    ip++
    return `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`
  }
  const post = (headers: Record<string, string>, plugin: string) => () =>
    fetch(`${server.url}/api/v1/gateway`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-plugin-id': plugin, 'x-forwarded-for': address(), ...headers }, body: PAYLOAD }).then(ok)

  // A signed-in user on the plan with the largest daily allowance (10,000 units: one per card-paid call here).
  const [user] = await asService(db, 'signIn', (tx) => tx.insert(users).values({ email: `bench-gw-${Date.now()}@example.com`, name: 'Bench' }).returning())
  await asService(db, 'stripeWebhook', (tx) => tx.update(users).set({ plan: 'network', subscriptionStatus: 'active' }).where(eq(users.id, user.id)))
  const token = newSessionToken()
  await asService(db, 'sessionLifecycle', async (tx) => tx.insert(sessions).values({ tokenHash: await hashSessionToken(token), userId: user.id, expiresAt: new Date(Date.now() + SESSION_TTL_MS) }))
  const cookie = `${SESSION_COOKIE}=${token}`

  const rows: { name: string; figures: Figures; direct: Figures }[] = []
  const direct = (sequential: number, perCaller: number) =>
    measure(() => () => fetch(`${upstream.url}/${PAID}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: '*/*' }, body: PAYLOAD }).then(ok), sequential, perCaller)
  const row = async (name: string, make: (i: number) => Call, sequential = SEQUENTIAL, perCaller = PER_CALLER) => {
    // The direct upstream right before each method: the machine's load moves within a run.
    const d = await direct(sequential, perCaller)
    rows.push({ name, figures: await measure(make, sequential, perCaller), direct: d })
  }

  await direct(50, 4) // warm up both paths
  await measure(() => post({}, FREE), 50, 4)
  await row('free plugin', () => post({}, FREE))
  await row('card (plan allowance)', () => post({ cookie, 'x-payment-method': 'stripe' }, PAID))
  if (chain) {
    const price = '0.002'
    // Payment sessions: one per payer, each voucher allowing the whole deposit with its own nonce (out of order is
    // fine), signed before the clock starts, as a client holding its key would have them ready.
    const deposit = '100'
    const opened = await Promise.all(chain.payers.map((wallet) => PaymentSessionClient.open({ request: (p, i) => fetch(`${server.url}${p}`, i) }, chain, wallet, deposit)))
    const total = SEQUENTIAL + CALLERS * PER_CALLER
    const vouchers = await Promise.all(
      Array.from({ length: total }, (_, i) => {
        const s = opened[i % opened.length]
        return signVoucher(s.wallet, s.sessionId, { cumulativeAmount: parseUnits(deposit, 6), nonce: BigInt(1 + Math.floor(i / opened.length)) })
      }),
    )
    await row('payment session', (i) => post(sessionHeaders(opened[i % opened.length], vouchers[i]), PAID))

    // MPP: each call's challenge asked for and paid on chain before the clock starts (ten payers in parallel).
    const mppTotal = MPP_SEQUENTIAL + CALLERS * MPP_PER_CALLER
    const credentials: string[] = new Array(mppTotal)
    await Promise.all(
      chain.payers.map(async (payer: LocalAccount, p) => {
        for (let i = p; i < mppTotal; i += chain.payers.length) {
          const res = await fetch(`${server.url}/api/v1/gateway`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-plugin-id': PAID, 'x-payment-method': 'mpp', 'x-forwarded-for': address() }, body: PAYLOAD })
          const { params } = await challengeOf(res)
          const secret = mppSecret()
          const hash = await chain.pay(payer, { amount: price, memo: mppMemo(params.id, secret) })
          credentials[i] = credential(params, hash, secret)
        }
      }),
    )
    await row('MPP', (i) => post({ authorization: credentials[i] }, PAID), MPP_SEQUENTIAL, MPP_PER_CALLER)
  }
  console.info = info

  console.log(`gateway: POST /api/v1/gateway through the local server vs its loopback upstream called directly (db=${node.adapters.db} kv=${node.adapters.kv})`)
  console.log(`  ${''.padEnd(22)} one at a time: p50 / p99 (direct)           ${CALLERS} callers: calls/s (direct)     ratio`)
  for (const { name, figures: f, direct: d } of rows) {
    const seq = `${f.p50.toFixed(2)} / ${f.p99.toFixed(2)} ms (${d.p50.toFixed(2)} / ${d.p99.toFixed(2)}) +${(f.p50 - d.p50).toFixed(2)} ms`
    console.log(`  ${name.padEnd(22)} ${seq.padEnd(44)} ${f.rps.toFixed(0).padStart(6)} (${d.rps.toFixed(0).padStart(5)})   ${(f.rps / d.rps).toFixed(3)}`)
  }
  if (!chain) console.log('  payment session, MPP: skipped (anvil not installed: @foundry-rs/anvil)')

  server.close()
  await node.close()
  await chain?.close()
  await upstream.close()
  rmSync(dataDir, { recursive: true, force: true })
}

/** The web app as a Node HTTP server, through @hono/node-server's listener as `npm start` serves it. */
function createServerFor(fetchHandler: (req: Request) => Response | Promise<Response>) {
  return createServer(getRequestListener(fetchHandler))
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await gatewayCosts()
  process.exit(0)
}
