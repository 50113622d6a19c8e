import { type Placeholder, sql } from 'drizzle-orm'
import type { Db, Statement } from './rls'

/**
 * A select whose SQL is built once per database handle that keeps statements (`keepsPreparedSelects`), its values
 * bound per call as drizzle placeholders; on any other handle it is built per call, as any statement is.
 *
 * Why: drizzle builds a statement's SQL on every run, and for a plain select of one table that is ~25 µs of
 * JavaScript (its entity checks walk prototype chains), a fifth of a signed-in read's time on the local Postgres
 * path; a prepared one binds its values in ~1.5 µs. The handles that keep them are the local Postgres reader's,
 * one per pooled connection (infra/database.ts `pgReader`); per-request handles (PGlite's transactions, Neon's
 * HTTP batches) build per call, so nothing is kept per request.
 */
export type PreparedSelect<V extends Record<string, unknown>, T> = (db: Db, values: V) => Statement<T>

/** The values of `V`, each as itself (built per call) or as its placeholder (built once). */
export type Bound<V> = { [K in keyof V]: V[K] | Placeholder<K & string> }

interface Preparable<T> extends PromiseLike<T> {
  prepare(name: string): { execute(values: Record<string, unknown>): Promise<T> }
}

const keeping = new WeakSet<Db>()

/** Marks `db` (a handle that outlives a request) as one that keeps the prepared selects built on it. */
export function keepsPreparedSelects(db: Db): Db {
  keeping.add(db)
  return db
}

/**
 * A prepared select's run on a handle that keeps it: like a drizzle builder it runs when awaited (a reader decides
 * how to send it first), and readers treat it as the select it is (read only, one round trip).
 */
export class PreparedSelectRun<T> implements PromiseLike<T> {
  constructor(
    private readonly query: { execute(values: Record<string, unknown>): Promise<T> },
    private readonly values: Record<string, unknown>,
  ) {}

  then<A = T, B = never>(onFulfilled?: ((value: T) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): PromiseLike<A | B> {
    return this.query.execute(this.values).then(onFulfilled, onRejected)
  }
}

/** `build` with its values as placeholders, prepared once per keeping handle (see `PreparedSelect`). */
export function preparedSelect<V extends Record<string, unknown>, T>(keys: readonly (keyof V & string)[], build: (db: Db, values: Bound<V>) => Preparable<T>): PreparedSelect<V, T> {
  const placeholders = Object.fromEntries(keys.map((key) => [key, sql.placeholder(key)])) as Bound<V>
  const prepared = new WeakMap<Db, { execute(values: Record<string, unknown>): Promise<T> }>()
  return (db, values) => {
    if (!keeping.has(db)) return build(db, values) as unknown as Statement<T>
    let query = prepared.get(db)
    // Unnamed (''): sent as text like any select, so the local reader still inlines its values into its one round
    // trip; a named statement would be prepared on the server, a round trip of its own on that path.
    if (!query) prepared.set(db, (query = build(db, placeholders).prepare('')))
    // Not batchable: only keeping handles get one, and their reader runs statements itself (never a Neon batch).
    return new PreparedSelectRun(query, values) as unknown as Statement<T>
  }
}
