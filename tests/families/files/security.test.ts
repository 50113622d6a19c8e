import { eq } from 'drizzle-orm'
import { readdir } from 'node:fs/promises'
import { beforeAll, describe, expect, it } from 'vitest'
import { files, storageUsage } from '../../../schema'
import { BROWSER, type SeededUser, useFixture } from '../../support/harness'
import { expectOwnRowsOnly } from '../../support/rls'
import { seedAgent } from '../instance/helpers'
import { signDelivery } from '../../../lib/queue/sign'
import { deliverPurge, download, type FilesHarness, filesHarness, list, multipart, objectsOf, PURGE_URL, recordsOf, remove, send, STORES, upload, usageOf } from './helpers'
import { FORBIDDEN_ORIGIN } from '../../support/requests'

describe.each(STORES)('files on the %s store: security', (kind) => {
  let alice: SeededUser
  let bob: SeededUser
  let aliceAgent: string
  let aliceFile: { id: string; size: number }
  const h = useFixture(() => filesHarness(kind), { close: (x) => x.closeAll() })
  beforeAll(async () => {
    ;({ alice, bob } = h.users)
    aliceAgent = (await seedAgent(h, alice)).id
    aliceFile = (await (await upload(h, alice, aliceAgent, { filename: 'private.txt', type: 'text/plain', data: 'alice only' })).json()).file
  })

  const aliceStillHasIt = async () => {
    const res = await download(h, alice, aliceFile.id)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('alice only')
  }

  describe('authentication', () => {
    const requests = () => [
      ['GET', '/api/files', undefined],
      ['GET', `/api/files?download=${aliceFile.id}`, undefined],
      ['GET', `/api/files?agentId=${aliceAgent}`, undefined],
      ['POST', '/api/files', multipart([{ name: 'agentId', value: aliceAgent }, { name: 'file', filename: 'x', data: 'x' }])],
      ['DELETE', '/api/files', JSON.stringify({ fileId: aliceFile.id })],
    ] as const

    it('every route → 401 {error:"Unauthorized"} without a session, or with a forged or unknown one', async () => {
      for (const [method, path, body] of requests()) {
        for (const cookie of [undefined, 'service-session=forged', `service-session=${'0'.repeat(64)}`]) {
          const headers: Record<string, string> = { ...BROWSER }
          if (cookie) headers.cookie = cookie
          if (method === 'POST') headers['content-type'] = 'multipart/form-data; boundary=----FilesTestBoundary7MA4YWxkTrZu0gW'
          if (method === 'DELETE') headers['content-type'] = 'application/json'
          const res = await h.web.request(path, { method, headers, body: body as BodyInit | undefined })
          expect(res.status, `${method} ${path} ${cookie}`).toBe(401)
          expect(await res.json()).toEqual({ error: 'Unauthorized', code: 'UNAUTHORIZED' })
        }
      }
      await aliceStillHasIt()
    })

    it('authentication comes first: a malformed upload without a session is 401, not 400; nothing is read or kept', async () => {
      const res = await send(h, new TextEncoder().encode('garbage'), { contentType: 'text/plain' })
      expect(res.status).toBe(401)
    })

    it('a foreign Origin with a valid cookie → 403 on POST and DELETE; nothing stored, nothing deleted', async () => {
      const before = (await recordsOf(h, alice.id)).length
      const post = await upload(h, alice, aliceAgent, { filename: 'csrf.txt', data: 'x' }, { headers: { origin: 'http://evil.example' } })
      expect(post.status).toBe(403)
      expect(await post.json()).toEqual(FORBIDDEN_ORIGIN)
      const del = await h.web.request('/api/files', {
        method: 'DELETE',
        headers: { ...BROWSER, origin: 'http://evil.example', cookie: alice.cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ fileId: aliceFile.id }),
      })
      expect(del.status).toBe(403)
      expect((await recordsOf(h, alice.id)).length).toBe(before)
      await aliceStillHasIt()
    })
  })

  describe('the purge receiver takes signed deliveries only', () => {
    it('401 without a signature, with a wrong key, or signed for another URL or body; nothing is deleted', async () => {
      await h.db.update(files).set({ status: 'deleting' }).where(eq(files.id, aliceFile.id))
      const body = JSON.stringify({ userId: alice.id })
      const post = (headers: Record<string, string>) => h.web.request(PURGE_URL, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
      const none = await post({})
      expect(none.status).toBe(401)
      expect(await none.json()).toEqual({ error: 'Missing queue signature', code: 'SIGNATURE_REQUIRED' })
      for (const signature of [
        await signDelivery('another-key', PURGE_URL, body),
        await signDelivery('files-family-queue-key', 'http://127.0.0.1:8787/api/queue/chat', body),
        await signDelivery('files-family-queue-key', PURGE_URL, JSON.stringify({ userId: bob.id })),
        'not.a.jwt',
      ]) {
        const res = await post({ 'upstash-signature': signature })
        expect(res.status).toBe(401)
        expect(await res.json()).toEqual({ error: 'Invalid queue signature', code: 'INVALID_SIGNATURE' })
      }
      expect(await objectsOf(h, alice.id)).toHaveLength(1)
      expect(await usageOf(h, alice.id)).toBe(aliceFile.size)
      // A signed delivery for another user deletes nothing of alice's.
      expect(await (await deliverPurge(h, bob.id)).json()).toEqual({ ok: true, purged: 0 })
      expect(await objectsOf(h, alice.id)).toHaveLength(1)
      await h.db.update(files).set({ status: 'stored' }).where(eq(files.id, aliceFile.id))
      await aliceStillHasIt()
    })
  })

  describe('files are visible only to their uploader', () => {
    it('bob’s list is empty, even filtered by alice’s agent', async () => {
      for (const query of ['', `?agentId=${aliceAgent}`]) {
        const res = await list(h, bob, query)
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ files: [], totalSize: 0, count: 0 })
      }
    })

    it('bob’s download and delete of alice’s file → 404, the same answer as an unknown id; the file survives', async () => {
      const dl = await download(h, bob, aliceFile.id)
      expect(dl.status).toBe(404)
      expect(await dl.json()).toEqual({ error: 'File not found', code: 'NOT_FOUND' })
      const del = await remove(h, bob, { fileId: aliceFile.id })
      expect(del.status).toBe(404)
      expect(await del.json()).toEqual({ error: 'File not found', code: 'NOT_FOUND' })
      await aliceStillHasIt()
      expect(await usageOf(h, alice.id)).toBe(aliceFile.size)
    })

    it('bob cannot upload to alice’s agent: 404 `Agent not found`, nothing reserved or written for anyone', async () => {
      const res = await upload(h, bob, aliceAgent, { filename: 'intruder.txt', data: 'x'.repeat(5000) })
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error: 'Agent not found', code: 'NOT_FOUND' })
      expect(await recordsOf(h, bob.id)).toEqual([])
      expect(await usageOf(h, bob.id)).toBe(0)
      expect(await objectsOf(h, bob.id)).toEqual([])
      expect((await recordsOf(h, alice.id)).map((r) => r.id)).toEqual([aliceFile.id])
    })

    it('row isolation: as a user, an unfiltered select of files and storage_usage sees only their own rows', async () => {
      await upload(h, bob, (await seedAgent(h, bob)).id, { filename: 'bobs.txt', data: 'bob' })
      await expectOwnRowsOnly(h.services.db, alice.id, files)
      await expectOwnRowsOnly(h.services.db, bob.id, files)
      await expectOwnRowsOnly(h.services.db, alice.id, storageUsage)
    })
  })

  describe('names never reach the storage path', () => {
    it('a traversal filename is sanitized and the object is stored under the caller’s prefix by id only', async () => {
      for (const filename of ['../../../../tmp/evil.sh', '..\\..\\evil.bat', '/etc/passwd', '%2e%2e%2fevil']) {
        const res = await upload(h, alice, aliceAgent, { filename, data: 'payload' })
        expect(res.status).toBe(201)
        const { file } = await res.json()
        expect(file.name).toMatch(/^[a-zA-Z0-9._-]+$/)
        expect(file.name.startsWith('.')).toBe(false)
        const [record] = (await recordsOf(h, alice.id)).filter((r) => r.id === file.id)
        expect(record.storageKey).toBe(`files/${alice.id}/${file.id}`)
      }
      // Nothing was written anywhere but the caller's prefix.
      const top = kind === 'local' ? await readdir(h.storeDir) : await readdir(`${h.storeDir}/files-test`)
      expect(top).toEqual(['files'])
      const users = kind === 'local' ? await readdir(`${h.storeDir}/files`) : await readdir(`${h.storeDir}/files-test/files`)
      expect(users.sort()).toEqual([alice.id, bob.id].sort())
    })

    it('a filename with quotes or line breaks cannot split the Content-Disposition header', async () => {
      const body = new TextEncoder().encode(
        `--${'----FilesTestBoundary7MA4YWxkTrZu0gW'}\r\nContent-Disposition: form-data; name="agentId"\r\n\r\n${aliceAgent}\r\n` +
          `--${'----FilesTestBoundary7MA4YWxkTrZu0gW'}\r\nContent-Disposition: form-data; name="file"; filename="a\\"; b=c %0D%0AX-Evil: 1.txt"\r\n\r\nq\r\n` +
          `--${'----FilesTestBoundary7MA4YWxkTrZu0gW'}--\r\n`,
      )
      const res = await send(h, body, { user: alice })
      expect(res.status).toBe(201)
      const { file } = await res.json()
      expect(file.name).toBe('a___b_c__0D_0AX-Evil__1.txt') // a " ; space, then b = c space % 0D % 0AX-Evil : space 1.txt
      const dl = await download(h, alice, file.id)
      expect(dl.headers.get('content-disposition')).toBe(`attachment; filename="${file.name}"`)
      expect(dl.headers.get('x-evil')).toBeNull()
    })

    it('an uploaded HTML file is served as an attachment that cannot run on the API’s origin', async () => {
      const { file } = await (await upload(h, alice, aliceAgent, { filename: 'x.html', type: 'text/html', data: '<script>alert(1)</script>' })).json()
      const res = await download(h, alice, file.id)
      expect(res.headers.get('content-disposition')).toMatch(/^attachment;/)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
    })
  })
})
