import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { HEARTBEAT_JOB_ID, type CronJob, type GatewaySession, type HeartbeatFrequency, type SyncPayload } from '../../lib/runtime/provider'

/**
 * What the local runtime keeps on its /data volume (`DATA_DIR/state.json`): chat sessions and the deliveries answered, the heartbeat
 * job, and what the platform last synced (skills, memories, files). Written whole on every change through a
 * temporary file and a rename, so a killed process leaves either the old or the new file, never half of one.
 */
export interface StoredMessage {
  role: 'user' | 'agent'
  text: string
  at: string
}

export interface StoredSession extends GatewaySession {
  history: StoredMessage[]
}

/** A chat delivery already answered: the same `deliveryId` gets the same answer, handled once. */
export interface StoredDelivery {
  id: string
  sessionId: string
  reply: string
  at: string
}

export interface RuntimeState {
  sessions: StoredSession[]
  /** The last MAX_DELIVERIES chat deliveries answered, oldest first. */
  deliveries: StoredDelivery[]
  heartbeat: { enabled: boolean; frequency: HeartbeatFrequency; lastRun: string | null; nextRun: string | null } | null
  skills: SyncPayload['skills']
  memories: SyncPayload['memories']
  files: SyncPayload['files']
  lastSyncAt: string | null
}

const empty = (): RuntimeState => ({ sessions: [], deliveries: [], heartbeat: null, skills: [], memories: [], files: [], lastSyncAt: null })

// A session keeps its last messages only; the count goes on.
export const MAX_HISTORY = 100
// Deliveries remembered: far more than a queue redelivers within its retry window.
export const MAX_DELIVERIES = 1000

export class StateFile {
  readonly path: string

  constructor(readonly dataDir: string) {
    mkdirSync(dataDir, { recursive: true })
    this.path = join(dataDir, 'state.json')
  }

  /** The stored state; a missing file is a fresh runtime. A corrupt one throws (runtime.doctor reports it). */
  read(): RuntimeState {
    let text: string
    try {
      text = readFileSync(this.path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty()
      throw err
    }
    return { ...empty(), ...(JSON.parse(text) as Partial<RuntimeState>) }
  }

  /** Like read, but a corrupt file starts over (the bad file is kept aside for inspection). */
  load(onCorrupt: (err: unknown) => void): RuntimeState {
    try {
      return this.read()
    } catch (err) {
      onCorrupt(err)
      try {
        renameSync(this.path, `${this.path}.corrupt-${Date.now()}`)
      } catch {
        // nothing to keep
      }
      return empty()
    }
  }

  write(state: RuntimeState) {
    const tmp = `${this.path}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(state))
    renameSync(tmp, this.path)
  }
}

export const FREQUENCY_MS: Record<HeartbeatFrequency, number> = {
  '30m': 30 * 60_000,
  '1h': 3_600_000,
  '2h': 2 * 3_600_000,
  '3h': 3 * 3_600_000,
  '6h': 6 * 3_600_000,
  '12h': 12 * 3_600_000,
}

export { HEARTBEAT_JOB_ID }

export function cronJobs(state: RuntimeState): CronJob[] {
  const h = state.heartbeat
  if (!h) return []
  return [{ id: HEARTBEAT_JOB_ID, name: 'Heartbeat', enabled: h.enabled, frequency: h.frequency, nextRun: h.enabled ? h.nextRun : null, lastRun: h.lastRun }]
}

export const publicSession = ({ history: _history, ...session }: StoredSession): GatewaySession => session
