/** Spec 2 "Colony": agents under this fitness are queued for culling. */
export const CULL_BELOW = 40
export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'
/** What `root.wallet_balance` says when the soul host gives none. */
export const NO_BALANCE = { formatted: '0.00', token: 'USDC.e' } as const

const STATUSES = ['active', 'stale', 'culling'] as const
type Raw = Record<string, unknown>

const obj = (v: unknown): Raw => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {})
const str = (v: unknown, max = 500) => (typeof v === 'string' && v.length > 0 ? v.slice(0, max) : null)
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null)
const clampFitness = (v: unknown) => Math.min(100, Math.max(0, num(v) ?? 0))
const round1 = (n: number) => Math.round(n * 10) / 10
const bool = (v: unknown) => v === true
const list = (v: unknown, max = 500) => (Array.isArray(v) ? v.slice(0, max) : [])

export interface ColonyAgent {
  id: string
  name: string
  generation: number
  fitness: number
  specialization: string | null
  children: string[]
  parent: string | null
  walletAddress: string | null
  status: (typeof STATUSES)[number]
  createdAt: string | null
  url: string | null
  endpoints: { slug: string; description: string; price: string }[]
  uptime: number
  version: string | null
}

/** One agent as the spec shows it, from whatever the soul host sent; null for a `template` (never counted). */
export function colonyAgent(raw: unknown): ColonyAgent | null {
  const a = obj(raw)
  if (a.status === 'template') return null
  const generation = num(a.generation)
  return {
    id: str(a.id, 200) ?? 'borg-root',
    name: str(a.name, 200) ?? str(a.id, 200) ?? 'borg-root',
    generation: generation === 1 || generation === 2 ? generation : a.parent ? 2 : 1,
    fitness: round1(clampFitness(a.fitness)),
    specialization: str(a.specialization, 200),
    children: list(a.children, 1000).filter((c): c is string => typeof c === 'string').map((c) => c.slice(0, 200)),
    parent: str(a.parent, 200),
    walletAddress: str(a.walletAddress ?? a.wallet_address, 100),
    status: (STATUSES as readonly string[]).includes(a.status as string) ? (a.status as ColonyAgent['status']) : 'active',
    createdAt: str(a.createdAt ?? a.created_at, 64),
    url: str(a.url, 2000),
    endpoints: list(a.endpoints, 100).map((e) => {
      const ep = obj(e)
      return { slug: str(ep.slug, 200) ?? '', description: str(ep.description, 1000) ?? '', price: str(String(ep.price ?? ''), 64) ?? '0' }
    }),
    uptime: Math.max(0, Math.floor(num(a.uptime) ?? 0)),
    version: str(a.version, 64),
  }
}

/** The tree's root, every missing value given its documented fallback (the zero address, `0.00 USDC.e`). */
export function colonyRoot(raw: unknown, agents: ColonyAgent[]) {
  const r = obj(raw)
  const fitness = obj(r.fitness)
  const balance = obj(r.wallet_balance)
  const soul = obj(r.soul)
  const colony = obj(r.colony)
  return {
    address: str(r.address, 100) ?? ZERO_ADDRESS,
    designation: str(r.designation, 200),
    fitness: { total: round1(clampFitness(fitness.total)), prediction: round1(clampFitness(fitness.prediction)), execution: round1(clampFitness(fitness.execution)) },
    wallet_balance: str(balance.formatted, 64) ? { formatted: str(balance.formatted, 64)!, token: str(balance.token, 32) ?? NO_BALANCE.token } : { ...NO_BALANCE },
    clone_available: bool(r.clone_available),
    clone_price: str(r.clone_price === undefined || r.clone_price === null ? null : String(r.clone_price), 64),
    soul: {
      active: bool(soul.active),
      dormant: soul.dormant === undefined ? !bool(soul.active) : bool(soul.dormant),
      total_cycles: Math.max(0, Math.floor(num(soul.total_cycles) ?? 0)),
      mode: str(soul.mode, 64),
      active_plan: soul.active_plan ?? null,
      free_energy: num(soul.free_energy),
      brain: soul.brain ?? null,
      transformer: soul.transformer ?? null,
    },
    colony: {
      rank: num(colony.rank),
      can_spawn: bool(colony.can_spawn),
      should_cull: bool(colony.should_cull),
      niche: str(colony.niche, 200),
      colony_size: agents.length,
      fitness_rank: [...agents].sort((a, b) => b.fitness - a.fitness).map((a) => ({ id: a.id, fitness: a.fitness })),
    },
  }
}

/**
 * The `tree` view: the soul host's agents without templates, their size, average fitness (one decimal, 0 when
 * empty), the fittest (null when empty), and the cull queue (fitness below 40), with the root.
 */
export function colonyTree(raw: unknown) {
  const answer = obj(raw)
  const agents = list(answer.agents, 5000).map(colonyAgent).filter((a): a is ColonyAgent => a !== null)
  const total = agents.reduce((sum, a) => sum + a.fitness, 0)
  return {
    colony_size: agents.length,
    avg_fitness: agents.length ? round1(total / agents.length) : 0,
    fittest: agents.reduce<ColonyAgent | null>((best, a) => (!best || a.fitness > best.fitness ? a : best), null),
    cull_queue: agents.filter((a) => a.fitness < CULL_BELOW),
    agents,
    root: colonyRoot(answer.root, agents),
  }
}

/** The `soul` view's keys (spec 2 "Colony"), each null when the host did not send it. */
export const SOUL_KEYS = [
  'active', 'dormant', 'total_cycles', 'last_think_at', 'mode', 'tools_enabled', 'coding_enabled', 'cycle_health',
  'active_plan', 'fitness', 'beliefs', 'goals', 'recent_thoughts', 'brain', 'transformer', 'benchmark',
  'capability_profile', 'role', 'acceleration', 'cortex', 'genesis', 'hivemind', 'synthesis', 'evaluation',
  'free_energy', 'lifecycle',
] as const

export const FITNESS_KEYS = ['total', 'trend', 'coordination', 'economic', 'evolution', 'execution', 'introspection', 'prediction', 'measured_at'] as const

/** The full cognitive state: exactly the spec's keys, and the fitness object's. */
export function soulState(raw: unknown) {
  const s = obj(raw)
  const state = Object.fromEntries(SOUL_KEYS.map((k) => [k, s[k] ?? null])) as Record<(typeof SOUL_KEYS)[number], unknown>
  if (state.fitness !== null) {
    const f = obj(state.fitness)
    state.fitness = Object.fromEntries(FITNESS_KEYS.map((k) => [k, f[k] ?? null]))
  }
  return state
}
