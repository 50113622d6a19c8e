import { createRoute } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { getAddress } from 'viem'
import { requireSessionSecret } from '../../../lib/auth/csrf'
import { walletProofDoc } from '../../../lib/auth/wallet-proof'
import { baseClient } from '../../../lib/chain'
import type { AppEnv } from '../../../lib/context'
import { ApiError, peerUnavailable } from '../../../lib/http/errors'
import { limits } from '../../../lib/http/limits'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { limitedRoute } from '../../../lib/http/rate-limit'
import { jsonBody } from '../../../lib/http/validation'
import { errorFields, log } from '../../../lib/log'
import { feeTerms, holdsStationToken, requireDjProof, SESSION_FEE, stationToken, STATION_TOKEN_HOLDING, verifySessionFee } from '../access'
import { RADIO_EXPIRE_PATH, RADIO_SWEEP_CRON } from '../expire'
import { MUX_RTMP_URL, muxClient, playbackIdOf, type MuxLiveStream } from '../mux'
import { attachStream, discardSession, MAX_SESSION_SEC, openSession, paymentUsed, sessionActive, walletStanding, type AccessPath } from '../sessions'
import { issueDjToken } from '../token'
import { ffmpegHelper } from '../ffmpeg'
import { CreatedStreamSchema, CreateStreamBody } from '../schemas'

const holding = STATION_TOKEN_HOLDING.toLocaleString('en-US')

export const route = createRoute(
  limitedRoute(limits.radioCreate, {
    method: 'post',
    path: '/api/radio/streams',
    operationId: 'createRadioStream',
    security: [],
    tags: ['Radio'],
    summary: 'Start a DJ session: a Mux live stream for a smart wallet',
    description:
      'No session: the wallet is the DJ. ' +
      walletProofDoc(
        'radio',
        'wallet',
        "the wallet's ERC-1271 `isValidSignature` of the message's EIP-191 hash, asked on Base (an ERC-6492 wrapper is " +
          'unwrapped). The message is checked first, then the wallet must be a smart wallet (contract code on chain ' +
          '8453; an EOA or an undeployed account is 403 `SMART_WALLET_REQUIRED`), then the signature',
      ) +
      ' Without the proof anyone could name a holder\'s (or a fee payer\'s) wallet and take its session.\n\n' +
      'Access, checked in this order: an unexpired guest pass (`radio_guest_passes`); a ' +
      `holding of at least ${holding} whole station tokens (\`RADIO_STATION_TOKEN\`, scaled by its \`decimals()\`; ` +
      `without it this path is off); else the ${SESSION_FEE} USDC session fee: \`txHash\` of a mined transfer of at ` +
      'least that much of `PAYMENT_TOKEN_ADDRESS` from the wallet to the platform wallet `PAYMENT_RECIPIENT`, each ' +
      'transaction usable once (recorded in the same transaction as the session). A direct `transfer` on the token that ' +
      'carries anything after its two arguments (an MPP payment’s memo) is refused (`memo_bound`): it pays the gateway ' +
      'call its memo names. A transfer made through the smart wallet (the token called by the wallet, not by the ' +
      'transaction) has no memo to read and is accepted. Without `txHash` the answer is ' +
      '402 `FEE_REQUIRED` with `fee` `{amount, currency, token, recipient, chainId}`. One current (`active` or `live`) ' +
      'session per wallet: a second, even concurrent, is 409 (a session past its expiry no longer counts). The Mux live ' +
      'stream has a public playback policy, recordings with the same, and Mux\'s own 2-hour cap on a continuous ' +
      'broadcast. If Mux fails, the session and its payment record are removed (the fee can be presented again) and ' +
      `the answer is 502. The session ends by itself after ${MAX_SESSION_SEC} s (\`auto-ended\`, the stream disabled, ` +
      'recordings kept): a job published on the queue, delayed to `expiresAt`. A queue that does not take it (down, or ' +
      'no answer within `QSTASH_TIMEOUT_MS`) does not fail the create: the session is still `auto-ended` by the ' +
      `expiry sweep (\`${RADIO_SWEEP_CRON}\`) within 10 minutes of \`expiresAt\`, and stops counting as this wallet's ` +
      'current session at `expiresAt` whatever the jobs did. `stream.streamKey` and `session.accessToken` are shown only here: the key is never stored; ' +
      'the token (an HS256 JWT under `SESSION_SECRET`, audience `radio-dj-access`, naming the session and wallet, valid until `expiresAt`) ends the ' +
      'session early.',
    request: { body: jsonBody(CreateStreamBody) },
    responses: {
      200: ok(CreatedStreamSchema),
      400: errorResponse('`wallet is required`, `Invalid wallet address`, `Invalid txHash`, `Invalid signature`, `Message too long`, `city must be at most 80 characters`, `name must be at most 64 characters` (`VALIDATION`); the proof\'s message malformed or of another purpose (`MESSAGE_MALFORMED`)'),
      401: errorResponse('The wallet proof is missing (`SIGNATURE_REQUIRED`) or refused (`NONCE_INVALID`, `DOMAIN_MISMATCH`, `URI_MISMATCH`, `CHAIN_MISMATCH`, `ADDRESS_MISMATCH`, `MESSAGE_EXPIRED`, `MESSAGE_NOT_YET_VALID`, `SIGNATURE_INVALID`)'),
      402: errorResponse(
        `Neither access path applies and no \`txHash\`: \`Hold ${holding} station tokens, have a guest pass, or pay the ${SESSION_FEE} USDC session fee\` (\`FEE_REQUIRED\`, with \`fee\`); or the transfer does not pay the fee (\`PAYMENT_REJECTED\`, with \`reason\`: \`not_found\`, \`reverted\`, \`wrong_token\`, \`wrong_recipient\`, \`wrong_payer\`, \`underpaid\`, \`memo_bound\`)`,
      ),
      403: errorResponse('`A smart wallet is required` (`SMART_WALLET_REQUIRED`)'),
      409: errorResponse('`This wallet already has an active session` (`SESSION_ACTIVE`); or `This transaction has already been used` (`PAYMENT_ALREADY_USED`)'),
      500: errorResponse('`Session secret not configured` (`MISCONFIGURED`)'),
      503: errorResponse('`Chain unavailable` (`CHAIN_UNAVAILABLE`, also when a smart wallet\'s proof cannot be checked); or Mux failed: `Streaming provider unavailable` (`STREAMING_UNAVAILABLE`, with `Retry-After`), nothing kept; or `Streaming not configured` (Mux token) or `Radio payments not configured` (no `PAYMENT_RECIPIENT`, when the fee is needed) (`NOT_CONFIGURED`)'),
    },
  }),
)

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const body = c.req.valid('json')
  const { config, db, queue } = c.var.services
  const requestId = c.var.requestId
  const secret = requireSessionSecret(config.sessionSecret)
  const mux = muxClient(config)
  const wallet = getAddress(body.wallet.toLowerCase())
  const walletKey = wallet.toLowerCase()
  const txHash = body.txHash?.toLowerCase()
  const client = baseClient(config)

  // The caller proves it holds the (smart) wallet before anything is looked up or granted: validation and the
  // limiter ran, the message's rules and nonce are checked before its two chain reads (code, ERC-1271).
  await requireDjProof(c, client, wallet, body)
  const now = new Date()
  const standing = await walletStanding(db, walletKey, txHash, now)
  if (standing.hasCurrent) throw sessionActive()

  let accessPath: AccessPath
  let payment: Awaited<ReturnType<typeof verifySessionFee>> | undefined
  const token = stationToken(config)
  if (standing.hasGuestPass) accessPath = 'guest_pass'
  else if (token && (await holdsStationToken(client, token, wallet, requestId))) accessPath = 'holding'
  else {
    const terms = feeTerms(config)
    if (!txHash) {
      const { minAmount: _, ...fee } = terms
      throw new ApiError('FEE_REQUIRED', { message: `Hold ${holding} station tokens, have a guest pass, or pay the ${SESSION_FEE} USDC session fee`, extra: { fee } })
    }
    if (standing.txUsed) throw paymentUsed()
    payment = await verifySessionFee(client, terms, wallet, txHash, requestId)
    accessPath = 'payment'
  }

  const sessionId = crypto.randomUUID()
  const expiresAt = new Date(now.getTime() + MAX_SESSION_SEC * 1000)
  const name = body.name || 'DJ'
  const discard = (id: string) =>
    discardSession(db, id).catch((e: unknown) => log.error('radio.session_not_discarded', { requestId, sessionId: id, ...errorFields(e) }))
  const retired = await openSession(db, { id: sessionId, wallet: walletKey, name, city: body.city || null, accessPath, payment, startedAt: now, expiresAt })
  for (const streamId of retired) {
    // A missed expiry the create just retired: its stream is disabled as the expiry would have (Mux's cap holds otherwise).
    await mux.disableLiveStream(streamId).catch((e: unknown) => log.warn('radio.retired_stream_not_disabled', { requestId, streamId, ...errorFields(e) }))
  }

  let stream: MuxLiveStream
  try {
    stream = await mux.createLiveStream({ passthrough: sessionId, maxContinuousSec: MAX_SESSION_SEC })
  } catch (e) {
    log.error('radio.stream_not_created', { dependency: 'mux', requestId, sessionId, ...errorFields(e) })
    await discard(sessionId)
    throw peerUnavailable('STREAMING_UNAVAILABLE')
  }
  try {
    await attachStream(db, sessionId, stream.id, playbackIdOf(stream)!)
  } catch (e) {
    await mux.deleteLiveStream(stream.id).catch(() => log.warn('radio.orphan_stream', { requestId, streamId: stream.id }))
    await discard(sessionId)
    throw e
  }

  // The 2-hour end, delivered back to this service; the sweep catches it if this publish is lost.
  await queue
    .publish(RADIO_EXPIRE_PATH, { sessionId }, { delaySec: MAX_SESSION_SEC, retries: 5, deduplicationId: `radio-expire-${sessionId}` })
    .catch((e: unknown) => log.warn('radio.expiry_not_scheduled', { requestId, sessionId, ...errorFields(e) }))

  const accessToken = await issueDjToken(secret, { sessionId, wallet: walletKey, exp: Math.floor(expiresAt.getTime() / 1000) })
  const fullRtmpUrl = `${MUX_RTMP_URL}/${stream.stream_key}`
  log.info('radio.session_started', { requestId, sessionId, streamId: stream.id, accessPath })
  return c.json(
    {
      success: true as const,
      stream: {
        id: stream.id,
        name,
        wallet,
        streamKey: stream.stream_key!,
        rtmpUrl: MUX_RTMP_URL,
        fullRtmpUrl,
        playbackId: playbackIdOf(stream)!,
        status: 'created' as const,
      },
      session: {
        id: sessionId,
        wallet,
        maxDuration: MAX_SESSION_SEC,
        remaining: Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000)),
        expiresAt: expiresAt.toISOString(),
        accessToken,
      },
      ffmpeg: ffmpegHelper(fullRtmpUrl),
    },
    200,
  )
}
