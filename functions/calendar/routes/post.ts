import { z } from '@hono/zod-openapi'
import type { RouteHandler } from '@hono/zod-openapi'
import { openCalendar } from '../connection'
import { deleteEvent, insertEvent, patchEvent, quickAddEvent } from '../google'
import { authorizationUrl } from '../oauth'
import { ApiError } from '../../../lib/http/errors'
import { errorResponse, ok } from '../../../lib/http/openapi'
import { signedInRoute } from '../../../lib/http/routes'
import { jsonBody } from '../../../lib/http/validation'
import { EventSchema } from '../schemas'

export const POST_ACTIONS = ['connect', 'create-event', 'update-event', 'delete-event', 'quick-add'] as const

const text = (name: string, max: number) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .trim()
    .min(1, `${name} is required`)
    .max(max, `${name} must be at most ${max} characters`)
const instant = (name: string) =>
  z.iso
    .datetime({
      offset: true,
      error: (iss) => (iss.input === undefined ? `${name} is required` : `${name} must be an ISO 8601 date-time with a time zone`),
    })
    .max(64)
    .openapi({ example: name === 'start' ? '2026-03-02T10:00:00-05:00' : '2026-03-02T11:00:00-05:00' })
const eventId = text('eventId', 1024).openapi({ description: 'The Google event id', example: 'evt7c9s1a2b3' })
const endAfterStart = (v: { start?: string; end?: string }) => !v.start || !v.end || Date.parse(v.end) > Date.parse(v.start)
const END_AFTER_START = { message: 'end must be after start', path: ['end'] }

const Connect = z.object({ action: z.literal('connect') }).openapi('CalendarConnect')
const CreateEvent = z
  .object({
    action: z.literal('create-event'),
    title: text('title', 1024),
    start: instant('start'),
    end: instant('end'),
    description: z.string().max(8192).optional(),
    location: z.string().max(1024).optional(),
    attendees: z.array(z.email('attendees must be email addresses').max(254)).max(50).optional().openapi({ description: 'Email addresses, at most 50' }),
  })
  .refine(endAfterStart, END_AFTER_START)
  .openapi('CalendarCreateEvent')
const UpdateEvent = z
  .object({
    action: z.literal('update-event'),
    eventId,
    title: text('title', 1024).optional(),
    description: z.string().max(8192).optional(),
    start: instant('start').optional(),
    end: instant('end').optional(),
    location: z.string().max(1024).optional(),
  })
  .refine(endAfterStart, END_AFTER_START)
  .openapi('CalendarUpdateEvent')
const DeleteEvent = z.object({ action: z.literal('delete-event'), eventId }).openapi('CalendarDeleteEvent')
const QuickAdd = z
  .object({ action: z.literal('quick-add'), text: text('text', 1024).openapi({ example: 'Lunch with Ada tomorrow at noon' }) })
  .openapi('CalendarQuickAdd')

const Body = z.discriminatedUnion('action', [Connect, CreateEvent, UpdateEvent, DeleteEvent, QuickAdd]).openapi('CalendarAction')

const Success = z.literal(true)
const Result = z.union([
  z.object({ authUrl: z.string().max(4096).openapi({ format: 'uri' }) }).openapi('CalendarAuthUrl'),
  z.object({ success: Success, eventId: z.string().max(1024), event: EventSchema }).openapi('CalendarEventCreated'),
  z.object({ success: Success, event: EventSchema }).openapi('CalendarEventUpdated'),
  z.object({ success: Success, eventId: z.string().max(1024) }).openapi('CalendarEventQuickAdded'),
  z.object({ success: Success }).openapi('CalendarEventDeleted'),
])

export const route = signedInRoute({
  method: 'post',
  path: '/api/calendar',
  operationId: 'changeCalendar',
  tags: ['Calendar'],
  summary: 'Google Calendar: connect, create, update, delete or quick-add an event',
  description:
    'By `action`: `connect` -> `{authUrl}` (Google\'s consent screen with a signed state, valid 10 minutes, single use); ' +
    '`create-event` -> `{success, eventId, event}`; `update-event` (only the fields given change) -> `{success, event}`; ' +
    '`delete-event` -> `{success: true}`; `quick-add` (Google reads the text) -> `{success, eventId}`. Every action but ' +
    '`connect` needs a connected calendar; an expired Google token is refreshed once and stored, a revoked grant marks ' +
    'the calendar disconnected (401 `NOT_CONNECTED`).',
  request: { body: jsonBody(Body) },
  responses: {
    200: ok(Result, 'By action'),
    400: errorResponse('Unknown or missing `action` (`INVALID_ACTION`); a missing or malformed field, `end` not after `start` (`VALIDATION`); invalid JSON'),
    401: errorResponse('No session (`UNAUTHORIZED`); `Calendar not connected` (`NOT_CONNECTED`)'),
    404: errorResponse('`update-event`, `delete-event`: `Event not found` (unknown or deleted) (`NOT_FOUND`)'),
    503: errorResponse('Google unreachable or failing, nothing changed (`PROVIDER_UNAVAILABLE`); or the Google OAuth client or `SESSION_SECRET` not configured (`NOT_CONFIGURED`)'),
  },
})


export const handler: RouteHandler<typeof route> = async (c) => {
  const body = c.req.valid('json')
  const me = c.var.user.id
  if (body.action === 'connect') {
    return c.json({ authUrl: await authorizationUrl(c, me) }, 200)
  }
  const calendar = await openCalendar(c, me)
  switch (body.action) {
    case 'create-event': {
      const { action: _, ...input } = body
      const event = await insertEvent(calendar.call, calendar.calendarId, input)
      return c.json({ success: true as const, eventId: event.id, event }, 200)
    }
    case 'update-event': {
      const { action: _, eventId: id, ...input } = body
      return c.json({ success: true as const, event: await patchEvent(calendar.call, calendar.calendarId, id, input) }, 200)
    }
    case 'delete-event':
      await deleteEvent(calendar.call, calendar.calendarId, body.eventId)
      return c.json({ success: true as const }, 200)
    case 'quick-add': {
      const event = await quickAddEvent(calendar.call, calendar.calendarId, body.text)
      return c.json({ success: true as const, eventId: event.id }, 200)
    }
  }
}
