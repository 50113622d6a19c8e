/**
 * Wall-clock time in an IANA time zone on Intl alone (workerd and Node both carry the tz database): the day's
 * one-hour slots 09:00-23:00 in the calendar's zone, and ISO 8601 strings with the zone's offset.
 */

/** Slots start at these local hours: 09:00-10:00 ... 22:00-23:00. */
export const FIRST_SLOT_HOUR = 9
export const LAST_SLOT_END_HOUR = 23
export const SLOT_COUNT = LAST_SLOT_END_HOUR - FIRST_SLOT_HOUR

export interface Slot {
  start: string
  end: string
}
export interface Interval {
  start: number
  end: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()
function formatter(timeZone: string) {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    formatters.set(timeZone, f)
  }
  return f
}

export function isTimeZone(timeZone: string) {
  try {
    formatter(timeZone)
    return true
  } catch {
    return false
  }
}

/** The local calendar fields of `instant` in `timeZone`. */
function fields(timeZone: string, instant: number) {
  const out: Record<string, number> = {}
  for (const p of formatter(timeZone).formatToParts(new Date(instant))) if (p.type !== 'literal') out[p.type] = Number(p.value)
  return { year: out.year, month: out.month, day: out.day, hour: out.hour % 24, minute: out.minute, second: out.second }
}

/** The zone's offset from UTC at `instant`, in minutes (east positive). */
export function offsetMinutes(timeZone: string, instant: number) {
  const f = fields(timeZone, instant)
  const asUtc = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second)
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000)
}

/** The instant at which the wall clock in `timeZone` reads `date` (YYYY-MM-DD) `hour`:00. */
export function zonedHour(timeZone: string, date: string, hour: number) {
  const [y, m, d] = date.split('-').map(Number)
  const guess = Date.UTC(y, m - 1, d, hour)
  const first = guess - offsetMinutes(timeZone, guess) * 60_000
  // Across a DST change the offset at the answer differs from the guess's: take the one that holds there.
  const second = guess - offsetMinutes(timeZone, first) * 60_000
  return second
}

const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0')

/** `instant` as ISO 8601 in `timeZone`'s wall clock with its offset: `2026-03-02T09:00:00-05:00`. */
export function isoInZone(timeZone: string, instant: number) {
  const f = fields(timeZone, instant)
  const off = offsetMinutes(timeZone, instant)
  const sign = off < 0 ? '-' : '+'
  return `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}T${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}${sign}${pad(Math.trunc(off / 60))}:${pad(off % 60)}`
}

/** Today's date (YYYY-MM-DD) on the wall clock of `timeZone`. */
export function todayIn(timeZone: string, now = Date.now()) {
  const f = fields(timeZone, now)
  return `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}`
}

/** A real calendar date written YYYY-MM-DD (no 2026-02-30). */
export function isCalendarDate(date: string) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return false
  const [y, m, d] = date.split('-').map(Number)
  const t = new Date(Date.UTC(y, m - 1, d))
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d
}

/** The day's window the slots cover: 09:00 to 23:00 local, as instants. */
export const dayWindow = (timeZone: string, date: string): Interval => ({
  start: zonedHour(timeZone, date, FIRST_SLOT_HOUR),
  end: zonedHour(timeZone, date, LAST_SLOT_END_HOUR),
})

/**
 * The day's one-hour slots, split by the busy intervals: a slot that overlaps any busy time (even a minute of
 * it) is busy, every other one is available. Together they are the 14 slots, in order.
 */
export function splitSlots(timeZone: string, date: string, busy: Interval[]) {
  const availableSlots: Slot[] = []
  const busySlots: Slot[] = []
  for (let h = FIRST_SLOT_HOUR; h < LAST_SLOT_END_HOUR; h++) {
    const start = zonedHour(timeZone, date, h)
    const end = zonedHour(timeZone, date, h + 1)
    const slot = { start: isoInZone(timeZone, start), end: isoInZone(timeZone, end) }
    ;(busy.some((b) => b.start < end && b.end > start) ? busySlots : availableSlots).push(slot)
  }
  return { availableSlots, busySlots }
}
