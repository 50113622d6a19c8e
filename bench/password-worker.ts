// Bundled by bench/run.ts and run in workerd: one bcrypt hash + verify per request at `?cost=`.
import { hashSecret, verifySecret } from '../lib/auth/password'

export default {
  async fetch(req: Request) {
    const cost = Number(new URL(req.url).searchParams.get('cost') ?? 10)
    const hash = await hashSecret('correct horse battery staple', cost)
    return new Response(String(await verifySecret('correct horse battery staple', hash)))
  },
}
