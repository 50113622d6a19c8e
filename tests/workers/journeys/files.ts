import { eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { FILES_PURGE_PATH } from '../../../lib/files/purge'
import { agents, files } from '../../../schema'
import type { WorkerdPlatform } from '../../support/workerd-platform'
import { type Person, sendAs, signedIn, UNAUTHORIZED } from './people'
import { delivered } from './queue'

const BOUNDARY = '----WorkerdJourneyBoundary7MA4YWxk'
const enc = new TextEncoder()

/** A browser's multipart body: the agent, then the file. */
function multipart(agentId: string, filename: string, type: string, data: Uint8Array) {
  const head = enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="agentId"\r\n\r\n${agentId}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`)
  const tail = enc.encode(`\r\n--${BOUNDARY}--\r\n`)
  const out = new Uint8Array(head.length + data.length + tail.length)
  out.set(head)
  out.set(data, head.length)
  out.set(tail, head.length + data.length)
  return out
}
const upload = (p: WorkerdPlatform, who: Person | undefined, agentId: string, name: string, data: Uint8Array, type = 'application/octet-stream') =>
  sendAs(p, who, 'POST', '/api/files', multipart(agentId, name, type, data), { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` })

/** files: upload to S3 (streamed through the multipart parser), list, download the same bytes, delete; an agent's deletion purges its files through the queue. */
export function filesJourney(p: WorkerdPlatform) {
  describe('files', () => {
    it('uploads to S3 (one file in multipart), lists, downloads the same bytes, deletes, purges the files of a deleted agent through the queue; refuses the signed out, another user and bad input', async () => {
      const alice = await signedIn(p, 'Alice', { plan: 'label' })
      const [agent] = await p.db.insert(agents).values({ userId: alice.user.id, name: 'files-agent', plan: 'solo', status: 'running' }).returning()
      const data = new Uint8Array(70_000).map((_, i) => i % 256) // every byte value, more than one chunk
      const up = await upload(p, alice, agent.id, 'all-bytes.bin', data, 'application/x-thing')
      expect(up.status, await up.clone().text()).toBe(201)
      const { file } = (await up.json()) as { file: { id: string; size: number; name: string } }
      expect(file).toMatchObject({ size: 70_000, name: 'all-bytes.bin' })
      const small = await upload(p, alice, agent.id, 'notes.txt', enc.encode('hello files'), 'text/plain')
      expect(small.status).toBe(201)

      // Over one 5 MiB part: S3's multipart upload (create, three parts, complete) from the Worker, read back whole.
      const big = new Uint8Array(11 * 1024 * 1024).map((_, i) => (i * 7) % 251)
      const bigUp = await upload(p, alice, agent.id, 'big.bin', big)
      expect(bigUp.status, await bigUp.clone().text()).toBe(201)
      const bigFile = ((await bigUp.json()) as { file: { id: string; size: number } }).file
      expect(bigFile.size).toBe(big.length)
      const bigDl = await alice.get(`/api/files?download=${bigFile.id}`)
      expect(bigDl.headers.get('content-length')).toBe(String(big.length))
      expect(Buffer.compare(Buffer.from(await bigDl.arrayBuffer()), Buffer.from(big))).toBe(0)

      const list = (await (await alice.get(`/api/files?agentId=${agent.id}`)).json()) as { count: number; totalSize: number }
      expect(list).toMatchObject({ count: 3, totalSize: 70_011 + big.length })
      const dl = await alice.get(`/api/files?download=${file.id}`)
      expect(dl.status).toBe(200)
      expect(dl.headers.get('content-type')).toBe('application/x-thing')
      expect(dl.headers.get('content-length')).toBe('70000')
      expect(new Uint8Array(await dl.arrayBuffer())).toEqual(data)

      const bob = await signedIn(p, 'Bob', { plan: 'label' })
      const theirs = await bob.get(`/api/files?download=${file.id}`)
      expect(theirs.status).toBe(404)
      expect(await theirs.json()).toEqual({ error: 'File not found', code: 'NOT_FOUND' })
      const intruder = await upload(p, bob, agent.id, 'intruder.txt', enc.encode('x'))
      expect(intruder.status).toBe(404)
      expect(await intruder.json()).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })

      const del = await sendAs(p, alice, 'DELETE', '/api/files', JSON.stringify({ fileId: file.id }), { 'content-type': 'application/json' })
      expect(del.status, await del.clone().text()).toBe(200)
      expect(await p.db.select().from(files).where(eq(files.id, file.id))).toEqual([])
      // Deleting it again: not found.
      const again = await sendAs(p, alice, 'DELETE', '/api/files', JSON.stringify({ fileId: file.id }), { 'content-type': 'application/json' })
      expect(again.status).toBe(404)
      expect((await alice.get(`/api/files?download=${file.id}`)).status).toBe(404)

      // Deleting an agent (the agents Worker) hides its files at once and queues their purge to this one, which
      // deletes their objects, then their records.
      const [doomed] = await p.db.insert(agents).values({ userId: alice.user.id, name: 'doomed-agent', plan: 'solo', status: 'running' }).returning()
      const doomedUp = await upload(p, alice, doomed.id, 'doomed.txt', enc.encode('gone soon'))
      const doomedFile = ((await doomedUp.json()) as { file: { id: string } }).file
      const gone = await sendAs(p, alice, 'DELETE', `/api/agents/${doomed.id}`)
      expect(gone.status, await gone.clone().text()).toBe(200)
      expect((await alice.get(`/api/files?download=${doomedFile.id}`)).status).toBe(404)
      const [purge] = await delivered(p, FILES_PURGE_PATH)
      expect(purge.state).toBe('delivered')
      expect(await p.db.select().from(files).where(eq(files.id, doomedFile.id))).toEqual([])

      const signedOut = await upload(p, undefined, agent.id, 'anon.txt', enc.encode('x'))
      expect(signedOut.status).toBe(401)
      expect(await signedOut.json()).toEqual(UNAUTHORIZED)
      const bad = await sendAs(p, alice, 'POST', '/api/files', 'not multipart', { 'content-type': 'text/plain' })
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({ code: 'MALFORMED_MULTIPART' })
    })
  })
}
