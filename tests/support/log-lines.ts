import { afterEach, beforeEach, expect, vi } from 'vitest'

export type LogLine = Record<string, unknown> & { level: string; event: string }

/**
 * The JSON log lines (lib/log.ts) written during each test of the suite that calls it, at warn and error level,
 * kept from the console. `events(name)` gives the lines of one event; `unsafe(line)` says whether a line carries
 * what a log must never carry (a URL with host or loopback address, a query string, a bearer credential).
 */
export function useLogLines() {
  let lines: LogLine[] = []
  const keep = (raw: unknown) => {
    try {
      const parsed = JSON.parse(String(raw)) as LogLine
      if (parsed && typeof parsed.event === 'string') lines.push(parsed)
    } catch {
      // not one of ours
    }
  }
  beforeEach(() => {
    lines = []
    vi.spyOn(console, 'warn').mockImplementation(keep)
    vi.spyOn(console, 'error').mockImplementation(keep)
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })
  return {
    get all() {
      return lines
    },
    events: (event: string) => lines.filter((l) => l.event === event),
    /** Exactly one line of `event`, with `fields`, carrying nothing a log must never carry; answers it. */
    expectOne(event: string, fields: Record<string, unknown>) {
      const found = lines.filter((l) => l.event === event)
      expect(found).toHaveLength(1)
      expect(found[0]).toMatchObject(fields)
      expect(leaksDetail(found[0])).toBe(false)
      return found[0]
    },
  }
}

/** A log line must never carry a host, a loopback address, a query string or a credential. */
export const leaksDetail = (line: unknown) => /https?:\/\/|127\.0\.0\.1|localhost|\?[a-z_]+=|bearer |basic /i.test(JSON.stringify(line))
