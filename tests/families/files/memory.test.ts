import { request } from 'node:http'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { beforeAll, describe, expect, it } from 'vitest'
import { setPlan } from '../../auth/helpers'
import { seedAgent } from '../instance/helpers'
import { BOUNDARY, download, filesHarness, STORES, upload } from './helpers'
import { useFixture } from '../../support/harness'
import { serveFetch } from '../../support/loopback'

/**
 * An upload of 64 MiB through the real Node server, streamed by a real HTTP client with its `Content-Length`: the
 * process's live memory (heap and array buffers, measured after a forced GC every 2 MiB sent) must stay far under
 * the file's size. What is measured is printed, so the README's figure can be checked.
 */
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const MiB = 1024 * 1024
const FILE = 64 * MiB
/**
 * The typical (median) growth: local files hold about a chunk, S3 one 5 MiB part buffer (reused) and the part its request
 * sends. The peak adds what socket buffers and s3rver (in this same process) let pile up for a moment on a loaded
 * machine; it must stay under the file's size, which holding the file would pass.
 */
const MEDIAN_LIMIT = 12 * MiB
const PEAK_LIMIT = (FILE * 3) / 4

const live = () => {
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

describe.each(STORES)('files on the %s store: memory of a large upload', (kind) => {
  const h = useFixture(() => filesHarness(kind), { close: (x) => x.closeAll() })
  const web = useFixture(() => serveFetch(h.web.fetch))
  beforeAll(async () => {
    await setPlan(h.db, h.users.alice.id, 'solo', 'sub_mem')
  })

  it(`streams ${FILE / MiB} MiB to storage holding a bounded slice of it`, async () => {
    const alice = h.users.alice
    const agent = (await seedAgent(h, alice)).id
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="agentId"\r\n\r\n${agent}\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="large.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    )
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`)
    // Warm up first (database connections, the store's client, code paths): the baseline is a server at rest.
    expect((await upload(h, alice, agent, { filename: 'warm-up.txt', data: 'warm' })).status).toBe(201)
    const baseline = live()
    const samples: number[] = []
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: web.port,
          method: 'POST',
          path: '/api/files',
          headers: {
            'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
            'content-length': head.length + FILE + tail.length,
            cookie: alice.cookie,
            origin: 'http://localhost:3000',
            'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0',
          },
        },
        (res) => {
          let body = ''
          res.on('data', (d) => (body += d))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        },
      )
      req.on('error', reject)
      const chunk = Buffer.alloc(64 * 1024)
      let sent = 0
      const pump = () => {
        while (sent < FILE) {
          chunk.fill(sent / (64 * 1024))
          sent += chunk.length
          if (sent % (2 * MiB) === 0) samples.push(live() - baseline)
          if (!req.write(chunk)) return void req.once('drain', pump)
        }
        req.end(tail)
      }
      req.write(head)
      pump()
    })
    expect(answer.status, answer.body).toBe(201)
    const { file } = JSON.parse(answer.body)
    expect(file.size).toBe(FILE)
    // From the lowest level seen: a harness closed just before can still be freed during the upload.
    const floor = Math.min(0, ...samples)
    const sorted = samples.map((x) => x - floor).sort((a, b) => a - b)
    const median = sorted[sorted.length >> 1]
    const peak = sorted[sorted.length - 1]
    console.info(`files memory (${kind}): ${FILE / MiB} MiB upload, live memory grew by ${(median / MiB).toFixed(1)} MiB (median of ${samples.length} samples), ${(peak / MiB).toFixed(1)} MiB at most`)
    expect(median).toBeLessThan(MEDIAN_LIMIT)
    expect(peak).toBeLessThan(PEAK_LIMIT)
    // And it is all there.
    const res = await download(h, alice, file.id)
    expect(res.headers.get('content-length')).toBe(String(FILE))
    let size = 0
    let ok = true
    const reader = res.body!.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      for (let i = 0; i < r.value.length; i += 4096) ok &&= r.value[i] === Math.floor((size + i) / (64 * 1024)) % 256
      size += r.value.length
    }
    expect(size).toBe(FILE)
    expect(ok).toBe(true)
  }, 300_000)
})
