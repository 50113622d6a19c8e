import type { Harness } from './harness'

export interface Cost {
  status: number
  body: unknown
  /** Database round trips (network turns on real stores; PGlite calls, a transaction counting one, embedded). */
  db: number
  statements: number
  kv: number
}

/** The database and kv traffic one request causes (its response read to the end), on the harness's stores. */
export async function cost(h: Harness, send: () => Response | Promise<Response>): Promise<Cost> {
  const before = h.traffic()
  const res = await send()
  const text = await res.text()
  const after = h.traffic()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  return {
    status: res.status,
    body,
    db: after.dbRoundTrips - before.dbRoundTrips,
    statements: after.dbStatements - before.dbStatements,
    kv: after.kvRoundTrips - before.kvRoundTrips,
  }
}
