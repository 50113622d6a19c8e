import { z } from '@hono/zod-openapi'
import { EVENT_LIMITS, MAX_EVENTS } from './google'
import { SLOT_COUNT } from './slots'

/** `start`/`end` of an event: `dateTime` (ISO 8601 with offset) for timed events, `date` (YYYY-MM-DD) for all-day ones. */
export const EventTimeSchema = z
  .object({
    dateTime: z.string().max(EVENT_LIMITS.time).optional().openapi({ format: 'date-time', example: '2026-03-02T10:00:00-05:00' }),
    date: z.string().max(EVENT_LIMITS.time).optional().openapi({ description: 'All-day events only', example: '2026-03-02' }),
  })
  .openapi('CalendarEventTime')

/** The spec's "Calendar event". */
export const EventSchema = z
  .object({
    id: z.string().max(EVENT_LIMITS.id),
    summary: z.string().max(EVENT_LIMITS.summary).openapi({ description: 'The title; empty when the event has none' }),
    start: EventTimeSchema,
    end: EventTimeSchema,
    location: z.string().max(EVENT_LIMITS.location).optional(),
  })
  .openapi('CalendarEvent')

export const SlotSchema = z
  .object({
    start: z.string().max(64).openapi({ format: 'date-time', example: '2026-03-02T09:00:00-05:00' }),
    end: z.string().max(64).openapi({ format: 'date-time', example: '2026-03-02T10:00:00-05:00' }),
  })
  .openapi('CalendarSlot')

export const CalendarInfoSchema = z
  .object({
    message: z.string().max(256),
    actions: z.array(z.enum(['auth', 'list', 'availability'])).max(3),
  })
  .openapi('CalendarInfo')

export const CalendarStatusSchema = z.object({ connected: z.boolean() }).openapi('CalendarStatus')

export const CalendarEventsSchema = z
  .object({
    events: z.array(EventSchema).max(MAX_EVENTS).openapi({ description: `One page: at most ${MAX_EVENTS}, by start time` }),
    timezone: z.string().max(128).openapi({ description: "The calendar's IANA time zone", example: 'America/New_York' }),
  })
  .openapi('CalendarEvents')

export const CalendarAvailabilitySchema = z
  .object({
    availableSlots: z.array(SlotSchema).max(SLOT_COUNT),
    busySlots: z.array(SlotSchema).max(SLOT_COUNT),
    date: z.string().max(10).openapi({ example: '2026-03-02' }),
  })
  .openapi('CalendarAvailability')
